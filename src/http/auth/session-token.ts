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
