/**
 * grant_type=authorization_code (RFC 6749 §4.1.3), validated in Doorkeeper's order (reference
 * oauth.md, "Authorization code"): parameters (invalid_request), client (invalid_client), the code
 * itself — known, issued to this client, unused, unexpired — then the redirect URI it was issued
 * for and the PKCE verifier (invalid_grant for each, RFC 6749 §5.2).
 */
import type { FastifyRequest } from 'fastify';
import { digest } from '../../domain/tokens/secret.ts';
import { findGrantByCodeDigest } from '../../domain/oauth/oauth.queries.ts';
import { redeemAuthorizationCode } from '../../domain/oauth/redeem-authorization-code.ts';
import { findUserById } from '../../domain/users/users.queries.ts';
import { authenticateClient, clientCredentials } from '../client-auth.ts';
import { missingParam, oauthError } from '../errors.ts';
import { verifierMatches } from '../pkce.ts';
import { tokenResponseBody, type TokenResponseBody } from '../token-response.ts';
import type { OAuthServer } from '../server.ts';

export async function authorizationCodeGrant(
  server: OAuthServer,
  request: FastifyRequest,
  param: (n: string) => string | undefined,
): Promise<TokenResponseBody> {
  const { db } = server.ctx;
  const code = param('code');
  const redirectUri = param('redirect_uri');
  const verifier = param('code_verifier');
  if (!code) throw oauthError('invalid_request', missingParam('code'));
  const grant = await findGrantByCodeDigest(db, digest(code));
  if (grant?.code_challenge && !verifier) throw oauthError('invalid_request', missingParam('code_verifier'));
  if (!redirectUri) throw oauthError('invalid_request', missingParam('redirect_uri'));

  const creds = clientCredentials(request, param);
  const client = creds ? await authenticateClient(db, creds) : null;
  if (!client) throw oauthError('invalid_client');

  // A code is bound to the client it was issued to (RFC 6749 §4.1.3).
  if (!grant || grant.application_id !== client.id) throw oauthError('invalid_grant');
  if (grant.revoked_at === null) {
    const expiresAt = Date.parse(grant.created_at) + grant.expires_in * 1000;
    if (expiresAt <= Date.now()) throw oauthError('invalid_grant');
    // Spec rule 1: the same redirect_uri as in the authorization request, exactly.
    if (grant.redirect_uri !== redirectUri) throw oauthError('invalid_grant');
    if (!verifierMatches(grant, verifier)) throw oauthError('invalid_grant');
  }

  const redeemed = await redeemAuthorizationCode(db, grant);
  if (!redeemed.ok) throw oauthError('invalid_grant');
  const user = await findUserById(db, grant.resource_owner_id);
  if (!user) throw oauthError('invalid_grant');
  return tokenResponseBody(server, redeemed.value, { user, clientUid: client.uid, nonce: grant.nonce });
}
