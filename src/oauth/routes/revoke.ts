/**
 * POST /oauth/revoke (RFC 7009), as Doorkeeper answers it: 200 `{}` for an unknown token (§2.2)
 * and after revoking; a token of a confidential application may only be revoked by that
 * application, authenticated, else 403 unauthorized_client (reference oauth.md, "Revoke"). Tokens
 * of public applications and of the password grant without a client need no client credentials:
 * the Service allows that grant without them (spec rule 5), which is the setting under which it
 * skips the presence check.
 */
import type { FastifyPluginAsync } from 'fastify';
import { digest } from '../../domain/tokens/secret.ts';
import { findAccessTokenByDigest, findAccessTokenByRefreshDigest } from '../../domain/oauth/oauth.queries.ts';
import { revokeAccessToken } from '../../domain/oauth/revoke-access-token.ts';
import { authenticateClient, clientCredentials } from '../client-auth.ts';
import { applyCors, answerPreflight, TOKEN_CORS } from '../cors.ts';
import { missingParam, oauthError, revokeUnauthorized } from '../errors.ts';
import { oauthParams } from '../params.ts';
import type { OAuthServer } from '../server.ts';

const revoke: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  const { db } = server.ctx;

  app.options(
    '/oauth/revoke',
    { config: { web: true }, schema: { hide: true } },
    async (request, reply) => answerPreflight(request, reply, TOKEN_CORS),
  );

  app.post('/oauth/revoke', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    applyCors(request, reply, TOKEN_CORS);
    const param = oauthParams(request);
    const raw = param('token');
    if (!raw) throw oauthError('invalid_request', missingParam('token'));
    const tokenDigest = digest(raw);
    // RFC 7009 §2.1: the hint only orders the look-ups.
    const token = param('token_type_hint') === 'refresh_token'
      ? (await findAccessTokenByRefreshDigest(db, tokenDigest)) ?? (await findAccessTokenByDigest(db, tokenDigest))
      : (await findAccessTokenByDigest(db, tokenDigest)) ?? (await findAccessTokenByRefreshDigest(db, tokenDigest));

    reply.header('cache-control', 'no-store, no-cache').header('pragma', 'no-cache');
    if (!token) return reply.code(200).type('application/json').send('{}');
    if (token.application_id !== null && token.application_confidential === 1) {
      const creds = clientCredentials(request, param);
      const client = creds ? await authenticateClient(db, creds) : null;
      if (!client || client.id !== token.application_id) throw revokeUnauthorized();
    }
    await revokeAccessToken(db, token.id);
    return reply.code(200).type('application/json').send('{}');
  });
};

export default revoke;
