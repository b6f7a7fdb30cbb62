/**
 * OAuth 2.0 errors (RFC 6749 §4.1.2.1, §5.2; RFC 7009 §2.2.1; RFC 6750 §3.1) in Doorkeeper's
 * shape: `{error, error_description[, state]}`, blank keys dropped, status 401 only for
 * invalid_client and unauthorized_client and 400 otherwise, `Cache-Control: no-store, no-cache`
 * and a `WWW-Authenticate: Bearer` header (reference oauth.md §1). Texts are Doorkeeper's
 * config/locales/en.yml, with the Service's own invalid_redirect_uri text.
 */
import { ApiError } from '../http/errors.ts';

export const OAUTH_MESSAGES = {
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  invalid_redirect_uri: 'The redirect URI included is not valid.',
  unauthorized_client: 'The client is not authorized to perform this request using this method.',
  access_denied: 'The resource owner or authorization server denied the request.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_code_challenge_method: 'The code challenge method must be plain or S256.',
  server_error: 'The authorization server encountered an unexpected condition which prevented it from fulfilling the request.',
  unsupported_response_type: 'The authorization server does not support this response type.',
  unsupported_response_mode: 'The authorization server does not support this response mode.',
  invalid_client: 'Client authentication failed due to unknown client, no client authentication included, ' +
    'or unsupported authentication method.',
  invalid_grant: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI ' +
    'used in the authorization request, or was issued to another client.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_MESSAGES;

/** Doorkeeper 5's `missing_param` text. */
export const missingParam = (name: string) => `Missing required parameter: ${name}.`;

export const INVALID_TOKEN_MESSAGES = {
  revoked: 'The access token was revoked',
  expired: 'The access token expired',
  unknown: 'The access token is invalid',
} as const;

export const REVOKE_UNAUTHORIZED = 'You are not authorized to revoke this token';

const REALM = 'Doorkeeper';

function quoted(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

export function oauthStatus(error: string): number {
  return error === 'invalid_client' || error === 'unauthorized_client' ? 401 : 400;
}

/** The JSON body: blank values removed, as Doorkeeper's ErrorResponse#body does. */
export function oauthErrorBody(error: string, description: string, state?: string | null): Record<string, string> {
  return { error, error_description: description, ...(state ? { state } : {}) };
}

export function oauthHeaders(error: string, description: string): Record<string, string> {
  return {
    'cache-control': 'no-store, no-cache',
    pragma: 'no-cache',
    'www-authenticate': `Bearer realm="${REALM}", error="${quoted(error)}", error_description="${quoted(description)}"`,
  };
}

/** An error of the token, revoke and token-info endpoints. */
export function oauthError(
  error: OAuthErrorCode,
  description: string = OAUTH_MESSAGES[error],
  opts: { status?: number; state?: string } = {},
): ApiError {
  return new ApiError(opts.status ?? oauthStatus(error), oauthErrorBody(error, description, opts.state), oauthHeaders(error, description));
}

/**
 * Doorkeeper's InvalidTokenResponse: 401 invalid_token, and, by a quirk of its constructor, the
 * literal `"state":"unauthorized"` in the body (reference oauth.md §1, /oauth/token/info).
 */
export function invalidTokenError(reason: keyof typeof INVALID_TOKEN_MESSAGES = 'unknown'): ApiError {
  const description = INVALID_TOKEN_MESSAGES[reason];
  return new ApiError(401, oauthErrorBody('invalid_token', description, 'unauthorized'), oauthHeaders('invalid_token', description));
}

/** Doorkeeper's ForbiddenTokenResponse for a token without the scope a resource needs (RFC 6750 §3.1). */
export function insufficientScopeError(scopes: string[]): ApiError {
  const description = `Access to this resource requires scope "${scopes.join(' ')}".`;
  return new ApiError(403, oauthErrorBody('insufficient_scope', description), {
    ...oauthHeaders('insufficient_scope', description),
    'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", error_description="${quoted(description)}", scope="${scopes.join(' ')}"`,
  });
}

/** RFC 7009 §2.2.1 as Doorkeeper answers it: 403 unauthorized_client with its revoke text. */
export function revokeUnauthorized(): ApiError {
  return new ApiError(
    403,
    oauthErrorBody('unauthorized_client', REVOKE_UNAUTHORIZED),
    { 'cache-control': 'no-store, no-cache', pragma: 'no-cache' },
  );
}
