/** Every Kysely call of webhook delivery logs and of the hooks' failure state (auto-disabling). */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookLogsTable } from '../../db/tables/web-hooks.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function insertWebHookLog(db: Db, row: Insertable<WebHookLogsTable>): Promise<void> {
  await db.insertInto('web_hook_logs').values(row).execute();
}

/** Deletes at most `limit` logs created before `before`; returns how many went. */
export async function deleteWebHookLogsBefore(db: Db, before: string, limit: number): Promise<number> {
  const ids = await db.selectFrom('web_hook_logs').select('id').where('created_at', '<', before)
    .orderBy('created_at').limit(limit).execute();
  if (ids.length === 0) return 0;
  await db.deleteFrom('web_hook_logs').where('id', 'in', ids.map((r) => r.id)).execute();
  return ids.length;
}

/** WebHook#enable!: a success clears the failure state (one statement; nothing to do when already clear). */
export async function clearHookFailures(db: Db, hookId: number): Promise<void> {
  await db.updateTable('web_hooks').set({ recent_failures: 0, backoff_count: 0, disabled_until: null })
    .where('id', '=', hookId)
    .where((eb) => eb.or([eb('recent_failures', '<>', 0), eb('backoff_count', '<>', 0), eb('disabled_until', 'is not', null)]))
    .execute();
}

/** WebHook#failed!: one more failure in a row, up to `max`. */
export async function countHookFailure(db: Db, hookId: number, max: number): Promise<void> {
  await db.updateTable('web_hooks').set((eb) => ({ recent_failures: eb('recent_failures', '+', 1) }))
    .where('id', '=', hookId).where('recent_failures', '<', max).execute();
}

/**
 * WebHook#backoff!: disabled until `until`, one more back-off; written only while the back-off
 * count is still the one the caller computed from, so two failures at once back off once.
 */
export async function backOffHook(db: Db, hookId: number, fromCount: number, toCount: number, until: string): Promise<void> {
  await db.updateTable('web_hooks').set({ backoff_count: toCount, disabled_until: until })
    .where('id', '=', hookId).where('backoff_count', '=', fromCount).execute();
}
