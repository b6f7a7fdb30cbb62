/**
 * Every Kysely call of the follows area. Small functions taking (db | trx, …). The counts and
 * is_followed of the User entity stay in users.queries.ts; this file writes follows and lists them.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Users::UserFollowUser::MAX_FOLLOWEE_LIMIT. */
export const MAX_FOLLOWEE_LIMIT = 300;

export type FollowOutcome = 'followed' | 'unchanged' | 'limit_reached';

/**
 * Makes `followerId` follow `followeeId`. Following oneself or someone already followed changes
 * nothing; the limit is checked and the row inserted in one transaction, with the follower's row
 * locked first: on PostgreSQL two follows at once would otherwise both count 299 and both insert
 * (issue 35, item 1). The lock is a write of a column to itself (as storage-moves' lockContainers),
 * which both engines take without dialect-specific SQL; SQLite's transactions already run one at a time.
 */
export async function follow(db: Kysely<DB>, followerId: number, followeeId: number): Promise<FollowOutcome> {
  if (followerId === followeeId) return 'unchanged';
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('users').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', followerId).execute();
    const existing = await trx.selectFrom('user_follows').select('follower_id')
      .where('follower_id', '=', followerId).where('followee_id', '=', followeeId).executeTakeFirst();
    if (existing) return 'unchanged';
    const capped = trx.selectFrom('user_follows').select('followee_id').where('follower_id', '=', followerId)
      .limit(MAX_FOLLOWEE_LIMIT).as('capped');
    const { n } = await trx.selectFrom(capped).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    if (Number(n) >= MAX_FOLLOWEE_LIMIT) return 'limit_reached';
    const inserted = await trx.insertInto('user_follows')
      .values({ follower_id: followerId, followee_id: followeeId, created_at: nowIso() })
      .onConflict((oc) => oc.columns(['follower_id', 'followee_id']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0 ? 'followed' : 'unchanged';
  });
}

/** True when a follow was removed. */
export async function unfollow(db: Db, followerId: number, followeeId: number): Promise<boolean> {
  const result = await db.deleteFrom('user_follows')
    .where('follower_id', '=', followerId).where('followee_id', '=', followeeId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The users following `userId`, by id (served by user_follows_followee). */
export function followersQuery(db: Db, userId: number) {
  return db.selectFrom('user_follows')
    .innerJoin('users', 'users.id', 'user_follows.follower_id')
    .selectAll('users')
    .where('user_follows.followee_id', '=', userId)
    .orderBy('user_follows.follower_id');
}

/** The users `userId` follows, by id (served by the primary key). */
export function followingQuery(db: Db, userId: number) {
  return db.selectFrom('user_follows')
    .innerJoin('users', 'users.id', 'user_follows.followee_id')
    .selectAll('users')
    .where('user_follows.follower_id', '=', userId)
    .orderBy('user_follows.followee_id');
}
