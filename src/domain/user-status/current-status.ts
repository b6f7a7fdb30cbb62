/**
 * The status a reader sees. A status clears itself at clear_status_at (spec, Users table row
 * PUT /user/status): past it the status reads as none, and the stale row is deleted on the spot,
 * so there is no sweeper to run.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserStatusRow } from '../../db/tables/user-status.ts';
import { deleteExpiredStatuses, findStoredStatus } from './user-status.queries.ts';

export async function currentStatus(db: Kysely<DB>, userId: number, now: Date = new Date()): Promise<UserStatusRow | null> {
  const row = await findStoredStatus(db, userId);
  if (!row) return null;
  const nowIso = now.toISOString();
  if (row.clear_status_at !== null && row.clear_status_at <= nowIso) {
    await deleteExpiredStatuses(db, nowIso, userId);
    return null;
  }
  return row;
}
