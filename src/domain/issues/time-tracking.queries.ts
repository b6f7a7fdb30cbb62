/**
 * Writing an issue's time tracking (TimeTrackable of the Service 15.2, through Issues::UpdateService):
 * the estimate is a column of the issue; time spent is a log of entries (timelogs) whose sum is
 * the total, so subtracting and resetting add negative entries rather than erase history. Each
 * change leaves the system note SystemNotes::TimeTrackingService writes, in the same transaction.
 */
import { type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { nowIso } from '../clock.ts';
import { addSystemNote } from '../notes/system-notes.ts';
import { formatDuration } from './time-tracking.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The summary of a time log is varchar(255) (Timelog validates its length). */
export const MAX_TIMELOG_SUMMARY = 255;

export async function totalTimeSpent(db: Db, issueId: number): Promise<number> {
  const row = await db.selectFrom('timelogs').select((eb) => eb.fn.sum<number>('time_spent').as('n'))
    .where('issue_id', '=', issueId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

function note(trx: Transaction<DB>, issue: IssueRow, userId: number, text: string, now: string) {
  return addSystemNote(trx, {
    project_id: issue.project_id, noteable_type: 'Issue', noteable_id: issue.id, author_id: userId, note: text, action: 'time_tracking',
  }, now);
}

/** Sets the estimate (seconds); a change is noted ("changed time estimate to 3h", "removed time estimate"). */
export async function setTimeEstimate(db: Kysely<DB>, issue: IssueRow, userId: number, seconds: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    const before = await trx.selectFrom('issues').select('time_estimate').where('id', '=', issue.id).executeTakeFirstOrThrow();
    if (before.time_estimate === seconds) return;
    await trx.updateTable('issues').set({ time_estimate: seconds, updated_at: now, updated_by_id: userId })
      .where('id', '=', issue.id).execute();
    await note(trx, issue, userId, seconds === 0 ? 'removed time estimate' : `changed time estimate to ${formatDuration(seconds)}`, now);
  });
}

export type SpendResult = { ok: true } | { ok: false; reason: 'exceeds_total' };

/**
 * Logs time spent (negative subtracts); subtracting more than the total is refused
 * (TimeTrackable#check_negative_time_spent). Zero changes nothing.
 */
export async function addTimeSpent(
  db: Kysely<DB>, issue: IssueRow, userId: number, seconds: number, summary: string | null,
): Promise<SpendResult> {
  if (seconds === 0) return { ok: true };
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    if (seconds < 0 && -seconds > await totalTimeSpent(trx, issue.id)) return { ok: false, reason: 'exceeds_total' } as const;
    await trx.insertInto('timelogs').values({
      issue_id: issue.id, merge_request_id: null, user_id: userId, time_spent: seconds, spent_at: now, summary,
      created_at: now, updated_at: now,
    }).execute();
    await trx.updateTable('issues').set({ updated_at: now }).where('id', '=', issue.id).execute();
    await note(trx, issue, userId, `${seconds > 0 ? 'added' : 'subtracted'} ${formatDuration(Math.abs(seconds))} of time spent`, now);
    return { ok: true } as const;
  });
}

/** Brings the total back to zero with one balancing entry (TimeTrackable#reset_spent_time) and notes "removed time spent". */
export async function resetTimeSpent(db: Kysely<DB>, issue: IssueRow, userId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    const total = await totalTimeSpent(trx, issue.id);
    if (total !== 0) {
      await trx.insertInto('timelogs').values({
        issue_id: issue.id, merge_request_id: null, user_id: userId, time_spent: -total, spent_at: now, summary: null,
        created_at: now, updated_at: now,
      }).execute();
    }
    await trx.updateTable('issues').set({ updated_at: now }).where('id', '=', issue.id).execute();
    await note(trx, issue, userId, 'removed time spent', now);
  });
}
