/**
 * POST /oauth/token (RFC 6749 §3.2) with its three grants, and its CORS preflight (spec: only
 * Authorization beyond the simple headers).
 */
import type { FastifyPluginAsync } from 'fastify';
import { applyCors, answerPreflight, TOKEN_CORS } from '../cors.ts';
import { missingParam, oauthError } from '../errors.ts';
import { oauthParams } from '../params.ts';
import { sendTokenResponse } from '../token-response.ts';
import { authorizationCodeGrant } from '../grants/authorization-code.ts';
import { refreshTokenGrant } from '../grants/refresh-token.ts';
import { passwordGrant } from '../grants/password.ts';
import type { OAuthServer } from '../server.ts';

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  password: passwordGrant,
} as const;

const token: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  app.options(
    '/oauth/token',
    { config: { web: true }, schema: { hide: true } },
    async (request, reply) => answerPreflight(request, reply, TOKEN_CORS),
  );

  app.post('/oauth/token', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    applyCors(request, reply, TOKEN_CORS);
    const param = oauthParams(request);
    const grantType = param('grant_type');
    if (!grantType) throw oauthError('invalid_request', missingParam('grant_type'));
    if (!Object.hasOwn(GRANTS, grantType)) throw oauthError('unsupported_grant_type');
    const body = await GRANTS[grantType as keyof typeof GRANTS](server, request, param);
    return sendTokenResponse(reply, body);
  });
};

export default token;
