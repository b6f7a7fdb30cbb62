/**
 * Creates one access token row: a 64-hex access token (Doorkeeper's `:hex` generator), and a
 * refresh token when the grant gives one. Both are stored as digests only; the raw values exist
 * just long enough to be put in the token response.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB, OauthAccessTokenRow } from '../../db/types.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { insertAccessToken } from './oauth.queries.ts';
import { ACCESS_TOKEN_EXPIRES_IN } from './policy.ts';

export interface TokenRequest {
  applicationId: number | null;
  resourceOwnerId: number;
  scopes: string[];
  withRefreshToken: boolean;
  grantId?: number | null;
  previousRefreshTokenDigest?: string | null;
  expiresIn?: number;
}

export interface IssuedToken {
  row: OauthAccessTokenRow;
  accessToken: string;
  refreshToken: string | null;
}

export async function issueAccessToken(db: Kysely<DB> | Transaction<DB>, t: TokenRequest, now: Date = new Date()): Promise<IssuedToken> {
  const accessToken = generateHexToken();
  const refreshToken = t.withRefreshToken ? generateHexToken() : null;
  // Whole seconds: created_at is reported as a Unix time and expiry is counted from it.
  const createdAt = new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString();
  const row = await insertAccessToken(db, {
    applicationId: t.applicationId, resourceOwnerId: t.resourceOwnerId, tokenDigest: digest(accessToken),
    refreshTokenDigest: refreshToken ? digest(refreshToken) : null,
    previousRefreshTokenDigest: t.previousRefreshTokenDigest ?? null,
    scopes: t.scopes.join(' '), expiresIn: t.expiresIn ?? ACCESS_TOKEN_EXPIRES_IN, grantId: t.grantId ?? null, createdAt,
  });
  return { row, accessToken, refreshToken };
}
