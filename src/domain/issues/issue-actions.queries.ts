/**
 * What else a reader or triager does with one issue: subscribing to it (the unique index of
 * subscriptions keeps one row per user and issue, written as an upsert), who takes part in it
 * (Participable), its user agent detail, and its place in a manually ordered list
 * (RelativePositioning: a position between its new neighbours, making room when there is none).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { nowIso } from '../clock.ts';
import { mentionedUsernames } from '../todos/todos.queries.ts';
import { findUsersByUsernames } from '../users/users-batch.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Issues by id (a page of todos' targets), in no particular order. */
export async function findIssuesByIds(db: Db, ids: readonly number[]): Promise<IssueRow[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  return db.selectFrom('issues').selectAll().where('id', 'in', unique).execute();
}

/** Subscribes or unsubscribes the user explicitly (an explicit row overrides taking part). */
export async function setIssueSubscription(db: Db, userId: number, issue: IssueRow, subscribed: boolean): Promise<void> {
  const now = nowIso();
  await db.insertInto('subscriptions').values({
    user_id: userId, subscribable_type: 'Issue', subscribable_id: issue.id, project_id: issue.project_id,
    subscribed: subscribed ? 1 : 0, created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['subscribable_type', 'subscribable_id', 'user_id'])
    .doUpdateSet({ subscribed: subscribed ? 1 : 0, updated_at: now })).execute();
}

/**
 * The users taking part in an issue, in the order the Service gathers them (Participable): its
 * author, its assignees, then for each comment its author and whom it mentions, and whom the
 * description mentions. System notes are not anyone's participation.
 */
export async function participantIds(db: Db, issue: IssueRow): Promise<number[]> {
  const [assignees, notes] = await Promise.all([
    db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).orderBy('user_id').execute(),
    db.selectFrom('notes').select(['author_id', 'note']).where('noteable_type', '=', 'Issue').where('noteable_id', '=', issue.id)
      .where('system', '=', 0).orderBy('created_at').orderBy('id').execute(),
  ]);
  const ordered: number[] = [issue.author_id, ...assignees.map((a) => a.user_id)];
  const names = mentionedUsernames(issue.description ?? '');
  for (const n of notes) {
    ordered.push(n.author_id);
    names.push(...mentionedUsernames(n.note));
  }
  const mentioned = await findUsersByUsernames(db, [...new Set(names)]);
  const byName = new Map(mentioned.map((u) => [u.username.toLowerCase(), u.id]));
  for (const name of names) {
    const id = byName.get(name);
    if (id !== undefined) ordered.push(id);
  }
  return [...new Set(ordered)];
}

/** Room left between neighbours when a position is made for one without any (RelativePositioning::IDEAL_DISTANCE). */
const GAP = 512;

/**
 * Places `issue` after `after` and before `before` (either may be absent) among the issues of its
 * project. Neighbours without a position are put at the end first; with no room between them,
 * the issues from the upper neighbour on move up to make some.
 */
export async function reorderIssue(db: Kysely<DB>, issue: IssueRow, after: IssueRow | null, before: IssueRow | null): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const positioned = async (n: IssueRow): Promise<number> => {
      const row = await trx.selectFrom('issues').select('relative_position').where('id', '=', n.id).executeTakeFirstOrThrow();
      if (row.relative_position !== null) return row.relative_position;
      const max = await trx.selectFrom('issues').select((eb) => eb.fn.max('relative_position').as('p'))
        .where('project_id', '=', n.project_id).executeTakeFirst();
      const p = Number(max?.p ?? 0) + GAP;
      await trx.updateTable('issues').set({ relative_position: p }).where('id', '=', n.id).execute();
      return p;
    };
    const neighbour = async (from: number, direction: 'up' | 'down'): Promise<number | null> => {
      const row = await trx.selectFrom('issues')
        .select((eb) => (direction === 'up' ? eb.fn.min('relative_position') : eb.fn.max('relative_position')).as('p'))
        .where('project_id', '=', issue.project_id).where('id', '<>', issue.id)
        .where('relative_position', direction === 'up' ? '>' : '<', from).executeTakeFirst();
      return row?.p === null || row?.p === undefined ? null : Number(row.p);
    };
    let lower = after ? await positioned(after) : null;
    let upper = before ? await positioned(before) : null;
    if (lower !== null && upper !== null && lower > upper) [lower, upper] = [upper, lower];
    if (lower !== null && upper === null) upper = (await neighbour(lower, 'up')) ?? lower + 2 * GAP;
    if (upper !== null && lower === null) lower = (await neighbour(upper, 'down')) ?? upper - 2 * GAP;
    let lo = lower!;
    let hi = upper!;
    if (hi - lo < 2) {
      await trx.updateTable('issues').set({ relative_position: sql<number>`relative_position + ${GAP}` })
        .where('project_id', '=', issue.project_id).where('id', '<>', issue.id).where('relative_position', '>=', hi).execute();
      hi += GAP;
      lo = Math.min(lo, hi - 2);
    }
    await trx.updateTable('issues').set({ relative_position: Math.floor((lo + hi) / 2), updated_at: nowIso() })
      .where('id', '=', issue.id).execute();
  });
}
