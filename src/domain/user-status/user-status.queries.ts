/** Every Kysely call of the user status area. Small functions taking (db | trx, …). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserStatusRow } from '../../db/tables/user-status.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * The user's status unless it has expired: a status stops counting at its clear_status_at
 * (spec, Users table: "clear_status_after → clear_status_at"), whether or not the cleanup has
 * deleted it yet.
 */
export function findCurrentStatus(db: Db, userId: number, nowIso: string): Promise<UserStatusRow | undefined> {
  return db.selectFrom('user_statuses').selectAll()
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('clear_status_at', 'is', null), eb('clear_status_at', '>', nowIso)]))
    .executeTakeFirst();
}

/** The stored row, expired or not. */
export function findStoredStatus(db: Db, userId: number): Promise<UserStatusRow | undefined> {
  return db.selectFrom('user_statuses').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export interface StatusValues {
  emoji: string;
  message: string | null;
  availability: string;
  clear_status_at: string | null;
}

/** Creates or replaces the user's one status row. */
export async function upsertStatus(db: Db, userId: number, values: StatusValues, nowIso: string): Promise<UserStatusRow> {
  return db.insertInto('user_statuses')
    .values({ user_id: userId, ...values, created_at: nowIso, updated_at: nowIso })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...values, updated_at: nowIso }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteStatus(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('user_statuses').where('user_id', '=', userId).execute();
}

/** The cleanup: removes statuses whose clear_status_at has passed (served by its index). */
export async function deleteExpiredStatuses(db: Db, nowIso: string, userId?: number): Promise<number> {
  let q = db.deleteFrom('user_statuses').where('clear_status_at', '<=', nowIso);
  if (userId !== undefined) q = q.where('user_id', '=', userId);
  const result = await q.executeTakeFirst();
  return Number(result.numDeletedRows);
}
