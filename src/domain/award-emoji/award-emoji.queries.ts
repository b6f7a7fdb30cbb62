/**
 * Award emoji (the Service's AwardEmoji): one user's emoji reaction to an issue, a snippet or a
 * note. One per user, name and awardable: the unique index award_emoji_awardable_user_name.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { AwardEmojiTable } from '../../db/tables/notes.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type AwardEmojiRow = Selectable<AwardEmojiTable>;
export type AwardableType = 'Issue' | 'MergeRequest' | 'Snippet' | 'Note';

export interface AwardableRef {
  type: AwardableType;
  id: number;
}

/** The awardable's awards in the order they were given (`award_emoji` is ordered by id). */
export function awardsQuery(db: Kysely<DB>, a: AwardableRef) {
  return db.selectFrom('award_emoji').selectAll()
    .where('awardable_type', '=', a.type).where('awardable_id', '=', a.id).orderBy('id');
}

export function findAward(db: Db, a: AwardableRef, awardId: number): Promise<AwardEmojiRow | undefined> {
  return db.selectFrom('award_emoji').selectAll()
    .where('awardable_type', '=', a.type).where('awardable_id', '=', a.id).where('id', '=', awardId).executeTakeFirst();
}

/** The new award, or 'taken' when the user already gave this emoji here (the unique index says so). */
export async function insertAward(db: Db, a: AwardableRef, userId: number, name: string): Promise<AwardEmojiRow | 'taken'> {
  const now = nowIso();
  try {
    return await db.insertInto('award_emoji')
      .values({ name, user_id: userId, awardable_type: a.type, awardable_id: a.id, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    if (isUniqueViolation(err)) return 'taken';
    throw err;
  }
}

export async function deleteAward(db: Db, awardId: number): Promise<void> {
  await db.deleteFrom('award_emoji').where('id', '=', awardId).execute();
}

/**
 * A deleted user's awards stay, given by the ghost user (Users::MigrateToGhostUserService
 * #migrate_award_emoji). Where the ghost user already gave the same emoji to the same awardable,
 * the unique index keeps one: the deleted user's duplicate goes.
 */
export async function moveAwardsToUser(db: Db, fromId: number, toId: number): Promise<void> {
  await db.deleteFrom('award_emoji').where('user_id', '=', fromId).where(({ exists, selectFrom }) => exists(
    selectFrom('award_emoji as g').select('g.id')
      .where('g.user_id', '=', toId)
      .whereRef('g.awardable_type', '=', 'award_emoji.awardable_type')
      .whereRef('g.awardable_id', '=', 'award_emoji.awardable_id')
      .whereRef('g.name', '=', 'award_emoji.name'),
  )).execute();
  await db.updateTable('award_emoji').set({ user_id: toId }).where('user_id', '=', fromId).execute();
}
