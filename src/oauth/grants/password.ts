/**
 * grant_type=password (RFC 6749 §4.3), kept for the Service's clients although RFC 9700 §2.4 says
 * it MUST NOT be used; mitigated as the Service does: refused for users with two-factor
 * authentication (spec rule 5), every failure counts towards the sign-in lockout, and the
 * response carries no refresh token (spec, OAuth token response). Client credentials are
 * optional (HTTP Basic or body); when sent they must be valid, and without them the token gets
 * the default scope `api` (spec rule 5).
 */
import type { FastifyRequest } from 'fastify';
import { authenticateUser } from '../../domain/oauth/authenticate-user.ts';
import { currentSettings } from '../../domain/settings/settings.ts';
import { issueAccessToken } from '../../domain/oauth/issue-access-token.ts';
import { authenticateClient, clientCredentials } from '../client-auth.ts';
import { oauthError } from '../errors.ts';
import { defaultScopes, scopesAllowed, splitScopes } from '../scopes.ts';
import { tokenResponseBody, type TokenResponseBody } from '../token-response.ts';
import type { OAuthServer } from '../server.ts';

export async function passwordGrant(
  server: OAuthServer,
  request: FastifyRequest,
  param: (n: string) => string | undefined,
): Promise<TokenResponseBody> {
  const { db } = server.ctx;
  const creds = clientCredentials(request, param);
  const client = creds ? await authenticateClient(db, creds) : null;
  if (creds && !client) throw oauthError('invalid_client');

  const username = param('username');
  const password = param('password');
  if (!username || !password) throw oauthError('invalid_grant');
  // Gitlab::Auth.find_with_user_password: no password authentication at all while
  // password_authentication_enabled_for_git is off (and no LDAP, which kiln has not).
  if (!(await currentSettings(db)).password_authentication_enabled_for_git) throw oauthError('invalid_grant');
  const auth = await authenticateUser(db, username, password);
  if (!auth.ok || auth.user.otp_required_for_login) throw oauthError('invalid_grant');

  const applicationScopes = client ? splitScopes(client.scopes) : null;
  const requested = param('scope');
  const scopes = requested === undefined ? defaultScopes(applicationScopes) : splitScopes(requested);
  if (!scopesAllowed(scopes, applicationScopes)) throw oauthError('invalid_scope');

  const issued = await issueAccessToken(db, {
    applicationId: client?.id ?? null,
    resourceOwnerId: auth.user.id,
    scopes,
    withRefreshToken: false,
  });
  return tokenResponseBody(server, issued, { user: auth.user, clientUid: client?.uid ?? null, nonce: null });
}
