/**
 * Resolves a raw OAuth access token to its row and owner when it still works: not revoked, not
 * expired. Used by /oauth/token/info, /oauth/userinfo and git over HTTP (username `oauth2`,
 * CONTRACT §4).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { digest } from '../tokens/secret.ts';
import { findUserById } from '../users/users.queries.ts';
import { findAccessTokenByDigest, type AccessTokenWithApp } from './oauth.queries.ts';

export type TokenState = 'revoked' | 'expired' | 'unknown';

export type UsableToken = { ok: true; token: AccessTokenWithApp; user: UserRow } | { ok: false; reason: TokenState };

/** When a token stops working, or null for one without expiry. */
export function tokenExpiresAt(token: Pick<AccessTokenWithApp, 'created_at' | 'expires_in'>): Date | null {
  return token.expires_in === null ? null : new Date(Date.parse(token.created_at) + token.expires_in * 1000);
}

export async function findUsableOauthToken(db: Kysely<DB>, rawToken: string, now: Date = new Date()): Promise<UsableToken> {
  const token = await findAccessTokenByDigest(db, digest(rawToken));
  if (!token) return { ok: false, reason: 'unknown' };
  if (token.revoked_at !== null && Date.parse(token.revoked_at) <= now.getTime()) return { ok: false, reason: 'revoked' };
  const expiresAt = tokenExpiresAt(token);
  if (expiresAt && expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
  const user = await findUserById(db, token.resource_owner_id);
  if (!user) return { ok: false, reason: 'unknown' };
  return { ok: true, token, user };
}
