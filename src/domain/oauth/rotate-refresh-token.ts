/**
 * Refresh token rotation (spec, OAuth 2.0 provider: "A refresh call invalidates the old access and
 * refresh tokens and returns new ones"). The old row (its access and refresh token together) is
 * revoked and the new row records the old refresh token's digest in
 * `previous_refresh_token_digest`, the column the Service's Doorkeeper uses to link generations
 * (reference §8.1). That link lets a reuse of a rotated refresh token be traced to the tokens that
 * replaced it, which RFC 9700 §4.14.2 says to revoke: a refresh token used twice has leaked.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { AccessTokenWithApp } from './oauth.queries.ts';
import { findSuccessorByPreviousRefreshDigest, revokeAccessTokenRow } from './oauth.queries.ts';
import { issueAccessToken, type IssuedToken } from './issue-access-token.ts';

/** The old token's revocation is announced as a credential event once the rotation commits (revokeAccessTokenRow). */
export type RotateResult = { ok: true; value: IssuedToken } | { ok: false; reason: 'already_rotated' };

export async function rotateRefreshToken(db: Kysely<DB>, old: AccessTokenWithApp, scopes: string[]): Promise<RotateResult> {
  const issued = await db.transaction().execute(async (trx) => {
    // The conditional revoke is the lock: a concurrent refresh with the same token loses here.
    if (!(await revokeAccessTokenRow(trx, old.id))) return null;
    return issueAccessToken(trx, {
      applicationId: old.application_id, resourceOwnerId: old.resource_owner_id, scopes, withRefreshToken: true,
      grantId: old.grant_id, previousRefreshTokenDigest: old.refresh_token_digest, expiresIn: old.expires_in ?? undefined,
    });
  });
  return issued ? { ok: true, value: issued } : { ok: false, reason: 'already_rotated' };
}

/**
 * A revoked refresh token was presented again: revoke every generation issued after it, each
 * revocation announced once the transaction commits (revokeAccessTokenRow).
 */
export async function revokeRefreshDescendants(db: Kysely<DB>, refreshDigest: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    let digestOfGeneration: string | null = refreshDigest;
    // Each generation names its predecessor; a chain is as long as the number of refreshes.
    for (let hops = 0; digestOfGeneration && hops < 10_000; hops++) {
      const next = await findSuccessorByPreviousRefreshDigest(trx, digestOfGeneration);
      if (!next) break;
      await revokeAccessTokenRow(trx, next.id);
      digestOfGeneration = next.refresh_token_digest;
    }
  });
}
