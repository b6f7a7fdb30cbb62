/**
 * Token scopes of the Service 15.x (reference §9). Registry scopes are absent because kiln has no
 * container registry; `admin_mode` arrived after 15.2.
 */
export const API_SCOPES = ['api', 'read_api', 'read_user'] as const;
export const REPOSITORY_SCOPES = ['read_repository', 'write_repository'] as const;
export const ADMIN_SCOPES = ['sudo'] as const;
export const OPENID_SCOPES = ['openid', 'profile', 'email'] as const;

/** Scopes a personal access or impersonation token may carry. */
export const TOKEN_SCOPES: readonly string[] = [...API_SCOPES, ...REPOSITORY_SCOPES, ...ADMIN_SCOPES];

/** Scopes an OAuth application may request. */
export const OAUTH_SCOPES: readonly string[] = [...TOKEN_SCOPES, ...OPENID_SCOPES];

export const DEFAULT_SCOPES = ['api'];

/** A stored empty scope list reads back as the default (reference §9). */
export function parseScopes(stored: string): string[] {
  const scopes = stored.split(/\s+/).filter(Boolean);
  return scopes.length > 0 ? scopes : [...DEFAULT_SCOPES];
}

export function formatScopes(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/**
 * The scopes a route accepts (reference §5.2): `api` everywhere, `read_api` for reads, plus the
 * route's own extras (for example `read_user` on user reads).
 */
export function routeScopes(method: string, extras: readonly string[] = []): string[] {
  const read = method === 'GET' || method === 'HEAD';
  const scopes = read ? ['api', 'read_api'] : ['api'];
  for (const s of extras) if (!scopes.includes(s)) scopes.push(s);
  return scopes;
}
