/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3.1): HTTP Basic
 * first, then `client_id`/`client_secret` in the body (Doorkeeper's order). A public
 * (non-confidential) application is identified by its client_id alone; a secret, when sent, must
 * match. Secrets are compared as digests in constant time.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, OauthApplicationRow } from '../db/types.ts';
import { digest, safeEqual } from '../domain/tokens/secret.ts';
import { findApplicationByUid } from '../domain/oauth/oauth.queries.ts';

export interface ClientCredentials {
  uid: string;
  secret: string | undefined;
}

function formDecode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** The credentials a request presents, or null when it presents none. */
export function clientCredentials(request: FastifyRequest, param: (name: string) => string | undefined): ClientCredentials | null {
  const auth = request.headers.authorization;
  const basic = typeof auth === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // RFC 6749 §2.3.1: both halves are form-urlencoded before being joined.
    const uid = formDecode(colon >= 0 ? decoded.slice(0, colon) : decoded);
    const secret = colon >= 0 ? formDecode(decoded.slice(colon + 1)) : '';
    if (uid) return { uid, secret: secret || undefined };
  }
  const uid = param('client_id');
  return uid ? { uid, secret: param('client_secret') } : null;
}

/** The application the credentials authenticate, or null. */
export async function authenticateClient(db: Kysely<DB>, creds: ClientCredentials): Promise<OauthApplicationRow | null> {
  const app = await findApplicationByUid(db, creds.uid);
  if (!app) return null;
  if (creds.secret === undefined) return app.confidential ? null : app;
  return safeEqual(digest(creds.secret), app.secret_digest) ? app : null;
}
