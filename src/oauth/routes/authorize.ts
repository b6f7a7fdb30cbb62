/**
 * /oauth/authorize (RFC 6749 §4.1.1–4.1.2): the code flow only. A signed-in user sees the consent
 * page (or, for a trusted application, is sent straight back with a code); Authorize and Deny
 * post back here with the session's CSRF token, and the whole request is validated again then,
 * since the forms' hidden fields come back from the browser. No CORS here (RFC 9700 §2.6).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { issueAccessGrant } from '../../domain/oauth/issue-access-grant.ts';
import { redirect, sendPage } from '../../web/layout.ts';
import { consentPage } from '../../web/pages/consent.ts';
import { oauthErrorPage } from '../../web/pages/message.ts';
import { currentSession, redirectToSignIn, validSessionCsrf, type WebSession } from '../../web/session.ts';
import { rejectForgedForm } from '../../web/routes/sign-in.ts';
import { OAUTH_MESSAGES, oauthStatus } from '../errors.ts';
import { oauthParams } from '../params.ts';
import { preAuthorize, redirectWith, type PreAuthorization } from '../pre-authorization.ts';
import type { OAuthServer } from '../server.ts';

type Approved = Extract<PreAuthorization, { kind: 'ok' }>;

const authorize: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  const { ctx } = server;

  /** Sends the error page or the error redirect; null when the request is valid. */
  async function validated(request: FastifyRequest, reply: FastifyReply): Promise<Approved | null> {
    const pre = await preAuthorize(ctx.db, oauthParams(request));
    if (pre.kind === 'page') {
      sendPage(reply, oauthStatus(pre.error), oauthErrorPage(pre.error, pre.description));
      return null;
    }
    if (pre.kind === 'redirect') {
      redirect(
        reply,
        request.method,
        redirectWith(pre.redirectUri, { error: pre.error, error_description: pre.description, state: pre.state }, pre.fragment),
      );
      return null;
    }
    return pre;
  }

  async function approve(request: FastifyRequest, reply: FastifyReply, session: WebSession, pre: Approved): Promise<FastifyReply> {
    const code = await issueAccessGrant(ctx.db, {
      applicationId: pre.application.id, resourceOwnerId: session.user.id, redirectUri: pre.redirectUri, scopes: pre.scopes,
      codeChallenge: pre.codeChallenge, codeChallengeMethod: pre.codeChallengeMethod, nonce: pre.nonce,
    });
    return redirect(reply, request.method, redirectWith(pre.redirectUri, { code, state: pre.state }));
  }

  function deny(request: FastifyRequest, reply: FastifyReply, pre: Approved): FastifyReply {
    return redirect(reply, request.method, redirectWith(pre.redirectUri, {
      error: 'access_denied', error_description: OAUTH_MESSAGES.access_denied, state: pre.state,
    }));
  }

  const opts = { config: { web: true }, schema: { hide: true } };

  app.get('/oauth/authorize', opts, async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return redirectToSignIn(request, reply);
    const pre = await validated(request, reply);
    if (!pre) return reply;
    if (pre.application.trusted) return approve(request, reply, session, pre);
    return sendPage(reply, 200, consentPage({
      applicationName: pre.application.name,
      scopes: pre.scopes,
      request: pre.request,
      csrfToken: session.csrfToken,
      username: session.user.username,
    }));
  });

  async function decide(request: FastifyRequest, reply: FastifyReply, decision: 'approve' | 'deny'): Promise<FastifyReply> {
    const session = await currentSession(ctx, request);
    if (!session) return redirect(reply, 'POST', '/users/sign_in');
    if (!validSessionCsrf(ctx, request, session)) return rejectForgedForm(reply);
    const pre = await validated(request, reply);
    if (!pre) return reply;
    return decision === 'approve' ? approve(request, reply, session, pre) : deny(request, reply, pre);
  }

  app.post('/oauth/authorize', opts, async (request, reply) => {
    const method = (request.body as Record<string, unknown> | undefined)?._method;
    return decide(request, reply, typeof method === 'string' && method.toLowerCase() === 'delete' ? 'deny' : 'approve');
  });
  app.delete('/oauth/authorize', opts, async (request, reply) => decide(request, reply, 'deny'));
};

export default authorize;
