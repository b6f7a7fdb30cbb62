/**
 * Reads of issues and of what the issue entity shows beside each (labels, assignees, milestone,
 * counts), batched by issue id so a page of issues costs a fixed number of queries.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import type { LabelRow, MilestoneRow } from '../../db/tables/labels.ts';
import { ByIds } from '../../db/query-shape.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findIssueByIid(db: Db, projectId: number, iid: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
}

export function findIssueById(db: Db, id: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
}

// The reads a page of issues makes for its entity, compiled once per number of ids (db/query-shape.ts ByIds):
// building and compiling them with Kysely on every request cost more than SQLite took to run them.
const assigneesById = new ByIds((db, ids) => db.selectFrom('issue_assignees').select(['issue_id', 'user_id'])
  .where('issue_id', 'in', ids).orderBy('issue_id').orderBy('user_id'));
const issueLabelsById = new ByIds((db, ids) => db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
  .selectAll('labels').select('label_links.target_id')
  .where('label_links.target_type', '=', 'Issue').where('label_links.target_id', 'in', ids).orderBy('labels.title'));
const milestonesById = new ByIds((db, ids) => db.selectFrom('milestones').selectAll().where('id', 'in', ids));
const userNotesById = new ByIds((db, ids) => db.selectFrom('notes').select(['noteable_id', (eb) => eb.fn.countAll<number>().as('n')])
  .where('noteable_type', '=', 'Issue').where('noteable_id', 'in', ids).where('system', '=', 0).groupBy('noteable_id'));
const votesById = new ByIds((db, ids) => db.selectFrom('award_emoji')
  .select(['awardable_id', 'name', (eb) => eb.fn.countAll<number>().as('n')])
  .where('awardable_type', '=', 'Issue').where('awardable_id', 'in', ids).where('name', 'in', ['thumbsup', 'thumbsdown'])
  .groupBy(['awardable_id', 'name']));
const timeSpentById = new ByIds((db, ids) => db.selectFrom('timelogs').select(['issue_id', (eb) => eb.fn.sum<number>('time_spent').as('n')])
  .where('issue_id', 'in', ids).groupBy('issue_id'));
const blockingById = new ByIds((db, ids) => db.selectFrom('issue_links').innerJoin('issues', 'issues.id', 'issue_links.source_id')
  .select(['issue_links.target_id', (eb) => eb.fn.countAll<number>().as('n')])
  .where('issue_links.link_type', '=', 'blocks').where('issue_links.target_id', 'in', ids).where('issues.state', '=', 'opened')
  .groupBy('issue_links.target_id'));

/** Assignee user ids of each issue, in assignment order (the Service orders issue_assignees by insertion). */
export async function assigneeIdsOf(db: Kysely<DB>, issueIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(issueIds.map((id) => [id, []]));
  for (const r of await assigneesById.all(db, issueIds)) out.get(r.issue_id)?.push(r.user_id);
  return out;
}

/** Labels on each target, by title: issues' through one compiled statement, others' (merge requests later) built each time. */
export async function labelsOfTargets(db: Kysely<DB>, targetType: string, ids: readonly number[]): Promise<Map<number, LabelRow[]>> {
  const out = new Map<number, LabelRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = targetType === 'Issue'
    ? await issueLabelsById.all(db, ids)
    : await db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
      .selectAll('labels').select('label_links.target_id')
      .where('label_links.target_type', '=', targetType).where('label_links.target_id', 'in', [...new Set(ids)])
      .orderBy('labels.title').execute();
  for (const { target_id, ...label } of rows) out.get(target_id)?.push(label);
  return out;
}

export async function milestonesByIds(db: Kysely<DB>, ids: readonly number[]): Promise<Map<number, MilestoneRow>> {
  return new Map((await milestonesById.all(db, ids)).map((m) => [m.id, m]));
}

export interface IssueCounts {
  user_notes_count: number;
  upvotes: number;
  downvotes: number;
  total_time_spent: number;
  /** Open issues that block this one. */
  blocking_issues_count: number;
}

/**
 * The counts the entity shows (Gitlab::IssuableMetadata): comments that are not system notes,
 * 👍 and 👎 awards, time spent, and the open issues blocking each one.
 */
export async function issueCounts(db: Kysely<DB>, issueIds: readonly number[]): Promise<Map<number, IssueCounts>> {
  const ids = [...new Set(issueIds)];
  const out = new Map<number, IssueCounts>(ids.map((id) => [id, {
    user_notes_count: 0, upvotes: 0, downvotes: 0, total_time_spent: 0, blocking_issues_count: 0,
  }]));
  if (ids.length === 0) return out;
  const [notes, awards, spent, blocking] = await Promise.all([
    userNotesById.all(db, ids), votesById.all(db, ids), timeSpentById.all(db, ids), blockingById.all(db, ids),
  ]);
  for (const r of notes) out.get(r.noteable_id!)!.user_notes_count = Number(r.n);
  for (const r of awards) out.get(r.awardable_id)![r.name === 'thumbsup' ? 'upvotes' : 'downvotes'] = Number(r.n);
  for (const r of spent) out.get(r.issue_id!)!.total_time_spent = Number(r.n);
  for (const r of blocking) out.get(r.target_id)!.blocking_issues_count = Number(r.n);
  return out;
}

/**
 * Which of these issues the user is subscribed to (Subscribable#subscribed?): an explicit
 * subscription row decides; without one, taking part (author, assignee, commenter) subscribes.
 */
export async function subscribedIssueIds(db: Db, userId: number, issueIds: readonly number[]): Promise<Set<number>> {
  const ids = [...new Set(issueIds)];
  if (ids.length === 0) return new Set();
  const [explicit, participating] = await Promise.all([
    db.selectFrom('subscriptions').select(['subscribable_id', 'subscribed'])
      .where('subscribable_type', '=', 'Issue').where('subscribable_id', 'in', ids).where('user_id', '=', userId).execute(),
    db.selectFrom('issues').select('id').where('id', 'in', ids).where((eb) => eb.or([
      eb('author_id', '=', userId),
      eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
        .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', userId)),
      eb.exists(eb.selectFrom('notes').select(sql.lit(1).as('one')).where('notes.noteable_type', '=', 'Issue')
        .whereRef('notes.noteable_id', '=', 'issues.id').where('notes.author_id', '=', userId).where('notes.system', '=', 0)),
    ])).execute(),
  ]);
  const decided = new Map(explicit.map((r) => [r.subscribable_id, r.subscribed === 1]));
  const out = new Set<number>();
  for (const r of participating) if (!decided.has(r.id)) out.add(r.id);
  for (const [id, on] of decided) if (on) out.add(id);
  return out;
}

/** Each issue's iid, by issue id. */
export async function issueIidsOf(db: Db, ids: readonly number[]): Promise<Map<number, number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('issues').select(['id', 'iid']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.iid]));
}
