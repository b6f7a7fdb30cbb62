/**
 * grant_type=refresh_token (RFC 6749 §6) in Doorkeeper's order (reference oauth.md, "Refresh
 * token rotation"): refresh_token present (invalid_request), known and live (invalid_grant),
 * client credentials valid when sent (invalid_client), the token's own client (invalid_grant),
 * scope within the original (invalid_scope). Rotation revokes the old access and refresh token.
 *
 * A refresh token that was already rotated away is refused, and when its own client presents it
 * the generations issued after it are revoked too (RFC 9700 §4.14.2: reuse means it leaked).
 * Refresh tokens outlive their access token (spec rule 7), so access-token expiry is not checked.
 *
 * redirect_uri: when sent, it must equal the authorization request's (spec, OAuth rule 1), or the
 * refresh is refused with invalid_grant as RFC 6749 §4.1.3 refuses a mismatched code exchange. An
 * absent one is accepted: RFC 6749 §6 has no redirect_uri in a refresh request, and clients that
 * follow it omit it (README, Compatibility).
 */
import type { FastifyRequest } from 'fastify';
import { digest } from '../../domain/tokens/secret.ts';
import { findAccessTokenByRefreshDigest, grantRedirectUri } from '../../domain/oauth/oauth.queries.ts';
import { revokeRefreshDescendants, rotateRefreshToken } from '../../domain/oauth/rotate-refresh-token.ts';
import { findUserById } from '../../domain/users/users.queries.ts';
import { authenticateClient, clientCredentials } from '../client-auth.ts';
import { missingParam, oauthError } from '../errors.ts';
import { splitScopes } from '../scopes.ts';
import { tokenResponseBody, type TokenResponseBody } from '../token-response.ts';
import type { OAuthServer } from '../server.ts';

export async function refreshTokenGrant(
  server: OAuthServer,
  request: FastifyRequest,
  param: (n: string) => string | undefined,
): Promise<TokenResponseBody> {
  const { db } = server.ctx;
  const raw = param('refresh_token');
  if (!raw) throw oauthError('invalid_request', missingParam('refresh_token'));
  const refreshDigest = digest(raw);
  const token = await findAccessTokenByRefreshDigest(db, refreshDigest);
  if (!token) throw oauthError('invalid_grant');

  const creds = clientCredentials(request, param);
  const client = creds ? await authenticateClient(db, creds) : null;
  const clientMatches = token.application_id === null || (client !== null && client.id === token.application_id);

  if (token.revoked_at !== null) {
    if (clientMatches && (!creds || client)) await revokeRefreshDescendants(db, refreshDigest);
    throw oauthError('invalid_grant');
  }
  if (creds && !client) throw oauthError('invalid_client');
  if (!clientMatches) throw oauthError('invalid_grant');

  const redirectUri = param('redirect_uri');
  if (redirectUri !== undefined && token.grant_id !== null && await grantRedirectUri(db, token.grant_id) !== redirectUri) {
    throw oauthError('invalid_grant');
  }

  const original = splitScopes(token.scopes);
  const requested = param('scope');
  const scopes = requested === undefined ? original : splitScopes(requested);
  if (scopes.length === 0 || scopes.some((s) => !original.includes(s))) throw oauthError('invalid_scope');

  const user = await findUserById(db, token.resource_owner_id);
  if (!user) throw oauthError('invalid_grant');
  const rotated = await rotateRefreshToken(db, token, scopes);
  if (!rotated.ok) throw oauthError('invalid_grant');
  return tokenResponseBody(server, rotated.value, { user, clientUid: token.application_uid, nonce: null });
}
