/**
 * Revokes a token row (RFC 7009): its access and refresh token stop working together, from the
 * next request on (the revocation is announced as a credential event).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { revokeAccessTokenRow } from './oauth.queries.ts';

/** True when this call revoked it; false when it was revoked already. */
export function revokeAccessToken(db: Kysely<DB>, tokenId: number): Promise<boolean> {
  return revokeAccessTokenRow(db, tokenId);
}
