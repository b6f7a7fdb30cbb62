/** Every Kysely call of the user preferences area. Small functions taking (db | trx, …). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserPreferencesRow } from '../../db/tables/user-status.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface PreferencesChange {
  view_diffs_file_by_file?: boolean;
  show_whitespace_in_diffs?: boolean;
}

const flag = (b: boolean) => (b ? 1 : 0) as 0 | 1;

/**
 * The user's preferences, created with the defaults on first use (the Service builds them on
 * demand), so the entity always has an id.
 */
export async function findOrCreatePreferences(db: Db, userId: number): Promise<UserPreferencesRow> {
  const found = await db.selectFrom('user_preferences').selectAll().where('user_id', '=', userId).executeTakeFirst();
  if (found) return found;
  const now = nowIso();
  await db.insertInto('user_preferences').values({ user_id: userId, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  return db.selectFrom('user_preferences').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
}

/** Sets the given flags in one statement, creating the row when there is none. */
export function updatePreferences(db: Db, userId: number, change: PreferencesChange): Promise<UserPreferencesRow> {
  const now = nowIso();
  const set: { view_diffs_file_by_file?: 0 | 1; show_whitespace_in_diffs?: 0 | 1; updated_at: string } = { updated_at: now };
  if (change.view_diffs_file_by_file !== undefined) set.view_diffs_file_by_file = flag(change.view_diffs_file_by_file);
  if (change.show_whitespace_in_diffs !== undefined) set.show_whitespace_in_diffs = flag(change.show_whitespace_in_diffs);
  return db.insertInto('user_preferences')
    .values({ user_id: userId, created_at: now, ...set })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(set))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The user's preferences row, or undefined before the first change (a page reads without writing). */
export function findPreferences(db: Db, userId: number): Promise<UserPreferencesRow | undefined> {
  return db.selectFrom('user_preferences').selectAll().where('user_id', '=', userId).executeTakeFirst();
}
