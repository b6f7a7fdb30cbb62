/**
 * Exchanges a validated authorization code for tokens, once. Marking the code used and creating
 * the token happen in one transaction, and the conditional update is the lock: of two concurrent
 * exchanges only one finds the code unused (RFC 6749 §4.1.2 "MUST NOT be used more than once").
 *
 * A code presented again after it was used means it leaked: the exchange is refused and every
 * token issued from it is revoked (RFC 6749 §4.1.2 SHOULD; RFC 9700 §4.5). Doorkeeper only refuses.
 * The revocations announce themselves as credential events (revokeTokensOfGrant).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { OauthAccessGrantRow } from '../../db/tables/oauth.ts';
import { consumeGrant, revokeTokensOfGrant } from './oauth.queries.ts';
import { issueAccessToken, type IssuedToken } from './issue-access-token.ts';

export type RedeemResult = { ok: true; value: IssuedToken } | { ok: false; reason: 'replayed' };

export async function redeemAuthorizationCode(db: Kysely<DB>, grant: OauthAccessGrantRow): Promise<RedeemResult> {
  if (grant.revoked_at !== null) return replayed(db, grant);
  const issued = await db.transaction().execute(async (trx) => {
    if (!(await consumeGrant(trx, grant.id))) return null;
    return issueAccessToken(trx, {
      applicationId: grant.application_id, resourceOwnerId: grant.resource_owner_id,
      scopes: grant.scopes.split(' ').filter(Boolean), withRefreshToken: true, grantId: grant.id,
    });
  });
  if (!issued) return replayed(db, grant);
  return { ok: true, value: issued };
}

async function replayed(db: Kysely<DB>, grant: OauthAccessGrantRow): Promise<RedeemResult> {
  await revokeTokensOfGrant(db, grant.id);
  return { ok: false, reason: 'replayed' };
}
