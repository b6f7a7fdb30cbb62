/**
 * The `_service_session` cookie and its CSRF token. The cookie holds a random secret whose digest
 * is the session's key; the CSRF token is an HMAC of that secret under the instance's
 * secret_key_base, so it needs no storage and cannot be forged without the cookie.
 */
import crypto from 'node:crypto';
import { safeEqual } from '../../domain/tokens/secret.ts';

export const SESSION_COOKIE = '_service_session';

export function csrfTokenFor(secretKeyBase: string, rawSession: string): string {
  return crypto.createHmac('sha256', secretKeyBase).update(`csrf:${rawSession}`).digest('base64url');
}

export function validCsrfToken(secretKeyBase: string, rawSession: string, presented: string | undefined): boolean {
  return typeof presented === 'string' && safeEqual(csrfTokenFor(secretKeyBase, rawSession), presented);
}

/**
 * One cookie's value from a Cookie header (RFC 6265 §5.4: `name=value` pairs joined by "; "), as
 * @fastify/cookie would read it: the first pair with the name wins, surrounding quotes go, and
 * %-escapes are decoded when they are valid. API requests read only the session cookie, and only
 * when they carry no token, so they skip parsing the whole header on every request.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end === -1) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq !== -1 && eq < end && header.slice(start, eq).trim() === name) {
      let value = header.slice(eq + 1, end).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (value.includes('%')) {
        try {
          value = decodeURIComponent(value);
        } catch {
          // Not a valid escape: the raw value, as the cookie parser keeps it.
        }
      }
      return value;
    }
    start = end + 1;
  }
  return undefined;
}
