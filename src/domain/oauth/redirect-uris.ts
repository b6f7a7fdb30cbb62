/**
 * Redirect URIs of an application: validation when registered (Doorkeeper's RedirectUriValidator
 * messages) and matching at the authorization and token endpoints.
 *
 * Matching is exact string comparison (RFC 9700 §2.1, §4.1.3); the one exception is the port of a
 * loopback IP redirect URI, which native apps pick at run time (RFC 8252 §7.3).
 */

/** Schemes the Service refuses (`forbid_redirect_uri` in its Doorkeeper configuration). */
const FORBIDDEN_SCHEMES = new Set(['data:', 'vbscript:', 'javascript:']);
/** Out-of-band "redirects" show the code in the browser; RFC 9700 §2.1 leaves no room for them. */
const OUT_OF_BAND = 'urn:ietf:wg:oauth:2.0:oob';

/** Registered URIs are stored one per line; whitespace separates them. */
export function splitRedirectUris(stored: string): string[] {
  return stored.split(/\s+/).filter(Boolean);
}

/** The problem with one URI, in Doorkeeper's words, or null when it may be registered. */
export function redirectUriProblem(uri: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) return 'must be an absolute URI.';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be a valid URI.';
  }
  if (uri.includes('#')) return 'cannot contain a fragment.';
  if (FORBIDDEN_SCHEMES.has(url.protocol) || uri.toLowerCase().startsWith(OUT_OF_BAND)) return 'is forbidden by the server.';
  if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.hostname) return 'must be a valid URI.';
  return null;
}

function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]');
}

/** Whether `given` is one of the application's registered redirect URIs. */
export function redirectUriRegistered(stored: string, given: string): boolean {
  for (const registered of splitRedirectUris(stored)) {
    if (registered === given) return true;
    let r: URL, g: URL;
    try {
      r = new URL(registered);
      g = new URL(given);
    } catch {
      continue;
    }
    // RFC 8252 §7.3: any port on a registered loopback IP, everything else exactly equal.
    if (isLoopback(r) && isLoopback(g) && r.hostname === g.hostname && r.pathname === g.pathname
      && r.search === g.search && g.hash === '' && r.username === '' && g.username === '' && r.password === '' && g.password === '') {
      return true;
    }
  }
  return false;
}
