/**
 * GET /oauth/token/info (spec, OAuth token info): the token's owner, scopes, remaining lifetime,
 * application and creation time, plus the deprecated aliases `scopes` and `expires_in_seconds`.
 * Any missing, unknown, expired or revoked token: Doorkeeper's InvalidTokenResponse, always with
 * the "invalid" text (reference oauth.md §1).
 */
import type { FastifyPluginAsync } from 'fastify';
import { findUsableOauthToken, tokenExpiresAt } from '../../domain/oauth/find-usable-token.ts';
import { bearerToken } from '../bearer.ts';
import { applyCors, answerPreflight, TOKEN_INFO_CORS } from '../cors.ts';
import { invalidTokenError } from '../errors.ts';
import type { OAuthServer } from '../server.ts';

const tokenInfo: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  app.options(
    '/oauth/token/info',
    { config: { web: true }, schema: { hide: true } },
    async (request, reply) => answerPreflight(request, reply, TOKEN_INFO_CORS),
  );

  app.get('/oauth/token/info', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    applyCors(request, reply, TOKEN_INFO_CORS);
    const raw = bearerToken(request);
    const found = raw ? await findUsableOauthToken(server.ctx.db, raw) : null;
    if (!found?.ok) throw invalidTokenError('unknown');
    const { token } = found;
    const expiresAt = tokenExpiresAt(token);
    const expiresIn = expiresAt === null ? null : Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
    const scopes = token.scopes.split(' ').filter(Boolean);
    reply.header('cache-control', 'no-store');
    return reply.type('application/json').send(JSON.stringify({
      resource_owner_id: token.resource_owner_id,
      scope: scopes,
      expires_in: expiresIn,
      application: { uid: token.application_uid },
      created_at: Math.floor(Date.parse(token.created_at) / 1000),
      scopes,
      expires_in_seconds: expiresIn,
    }));
  });
};

export default tokenInfo;
