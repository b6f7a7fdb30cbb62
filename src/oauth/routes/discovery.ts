/**
 * OpenID Connect Discovery 1.0 §4 and the JWKS (RFC 7517) it points to, as
 * doorkeeper-openid_connect and the Service publish them (reference §8.3). Only what kiln really
 * does is advertised: the code flow with query responses, the three grants, both PKCE methods.
 */
import type { FastifyPluginAsync } from 'fastify';
import { OAUTH_SCOPES } from '../../domain/auth/scopes.ts';
import { CLAIMS_SUPPORTED } from '../claims.ts';
import { applyCors, DISCOVERY_CORS } from '../cors.ts';
import { CODE_CHALLENGE_METHODS } from '../pkce.ts';
import type { OAuthServer } from '../server.ts';

const discovery: FastifyPluginAsync<{ server: OAuthServer }> = async (app, { server }) => {
  const base = server.ctx.config.externalUrl;
  const document = JSON.stringify({
    issuer: server.issuer,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    revocation_endpoint: `${base}/oauth/revoke`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
    jwks_uri: `${base}/oauth/discovery/keys`,
    scopes_supported: OAUTH_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'password', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    claim_types_supported: ['normal'],
    claims_supported: CLAIMS_SUPPORTED,
    code_challenge_methods_supported: CODE_CHALLENGE_METHODS,
  });
  const jwks = JSON.stringify({ keys: [server.keys.oidc.jwk, server.keys.ci.jwk] });
  const opts = { config: { web: true }, schema: { hide: true } };

  app.get('/.well-known/openid-configuration', opts, async (request, reply) => {
    applyCors(request, reply, DISCOVERY_CORS);
    return reply.type('application/json').send(document);
  });

  app.get('/oauth/discovery/keys', opts, async (request, reply) => {
    applyCors(request, reply, DISCOVERY_CORS);
    reply.header('cache-control', 'max-age=86400, public, must-revalidate, no-transform');
    return reply.type('application/json').send(jwks);
  });
};

export default discovery;
