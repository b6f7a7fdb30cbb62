/**
 * GET/POST /oauth/userinfo (OpenID Connect Core §5.3): needs a live token with the `openid`
 * scope (401 invalid_token otherwise, 403 insufficient_scope without it, RFC 6750 §3.1), and an
 * active owner (reference §8.4). The body is `sub` and the user_info claims.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findUsableOauthToken } from '../../domain/oauth/find-usable-token.ts';
import { apiAccessDeniedReason } from '../../domain/users/user-kind.ts';
import { bearerToken } from '../bearer.ts';
import { userinfoClaims } from '../claims.ts';
import { loadGroupClaims } from '../group-claims.ts';
import { applyCors, answerPreflight, USERINFO_CORS } from '../cors.ts';
import { insufficientScopeError, invalidTokenError } from '../errors.ts';
import type { OAuthServer } from '../server.ts';

const userinfo: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  const { ctx } = server;

  async function handler(request: FastifyRequest, reply: FastifyReply) {
    applyCors(request, reply, USERINFO_CORS);
    const raw = bearerToken(request);
    if (!raw) throw invalidTokenError('unknown');
    const found = await findUsableOauthToken(ctx.db, raw);
    if (!found.ok) throw invalidTokenError(found.reason);
    if (!found.token.scopes.split(' ').includes('openid')) throw insufficientScopeError(['openid']);
    if (apiAccessDeniedReason(found.user, ctx.config.externalUrl) !== null) throw invalidTokenError('unknown');
    const groupClaims = await loadGroupClaims(ctx.db, found.user.id);
    const claims = userinfoClaims(
      found.user,
      found.token.scopes.split(' '),
      { externalUrl: ctx.config.externalUrl, secretKeyBase: ctx.secretKeyBase },
      groupClaims,
    );
    reply.header('cache-control', 'no-store');
    return reply.type('application/json').send(JSON.stringify(claims));
  }

  const opts = { config: { web: true }, schema: { hide: true } };
  app.options('/oauth/userinfo', opts, async (request, reply) => answerPreflight(request, reply, USERINFO_CORS));
  app.get('/oauth/userinfo', opts, handler);
  app.post('/oauth/userinfo', opts, handler);
};

export default userinfo;
