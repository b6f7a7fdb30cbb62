/**
 * Reads of issues and of what the issue entity shows beside each (labels, assignees, milestone,
 * counts), batched by issue id so a page of issues costs a fixed number of queries.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import type { LabelRow, MilestoneRow } from '../../db/tables/labels.ts';
import { ByIds } from '../../db/query-shape.ts';
import { cachedRead } from '../../db/read-cache.ts';

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
/**
 * A page's labels in two steps: its label links alone (label_links_target_label holds every
 * column read, so SQLite never leaves the index), then the rows of the labels they name, ordered
 * by title, remembered until the next write (db/read-cache.ts): a project's pages name the same
 * few labels again and again. The join ordered by title read and sorted every link's label row on
 * every page (bench/queries.ts, 20 issues: 40 µs against 10 µs for the links).
 */
const issueLabelLinksById = new ByIds((db, ids) => db.selectFrom('label_links').select(['label_links.target_id', 'label_links.label_id'])
  .where('label_links.target_type', '=', 'Issue').where('label_links.target_id', 'in', ids));
const mergeRequestLabelLinksById = new ByIds((db, ids) => db.selectFrom('label_links')
  .select(['label_links.target_id', 'label_links.label_id'])
  .where('label_links.target_type', '=', 'MergeRequest').where('label_links.target_id', 'in', ids));
const labelsByIdByTitle = new ByIds((db, ids) => db.selectFrom('labels').selectAll().where('labels.id', 'in', ids).orderBy('labels.title'));

/** The labels of these ids, in the database's order of their titles (its collation, as `order by title`). */
function labelsInTitleOrder(db: Kysely<DB>, ids: readonly number[]): Promise<LabelRow[]> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  return cachedRead(db, `labels-by-title:${sorted.join(',')}`, () => labelsByIdByTitle.all(db, sorted));
}

const milestonesById = new ByIds((db, ids) => db.selectFrom('milestones').selectAll().where('id', 'in', ids));
/**
 * What a page of issues shows beside its rows, in one statement (one call into the database rather
 * than four; issue 29's Measure): kind 0 its assignees (issue id, user id), kind 1 its label links
 * (issue id, label id), kind 2 the open issues blocking each one and kind 3 the merge requests
 * closing each one (issue id, count; only those with any), and kind 4 the counter columns the
 * database keeps (migration 2026-12-02T0500_issuable_counters), read afresh rather than taken from
 * the rows, which a caller may have read before a note or time log of the same request.
 */
const pageFactsById = new ByIds((db, ids) => {
  // Typed, so that PostgreSQL can match the columns of the union.
  const none = sql<number | null>`cast(null as bigint)`;
  return db.selectFrom('issue_assignees')
    .select([sql<number>`0`.as('kind'), 'issue_id as id', 'user_id as a', none.as('b'), none.as('c'), none.as('d')])
    .where('issue_id', 'in', ids)
    .unionAll(db.selectFrom('label_links')
      .select([sql<number>`1`.as('kind'), 'target_id as id', 'label_id as a', none.as('b'), none.as('c'), none.as('d')])
      .where('target_type', '=', 'Issue').where('target_id', 'in', ids))
    .unionAll(db.selectFrom('issue_links').innerJoin('issues as blocker', 'blocker.id', 'issue_links.source_id')
      .select((eb) => [sql<number>`2`.as('kind'), 'issue_links.target_id as id', eb.fn.countAll<number>().as('a'),
        none.as('b'), none.as('c'), none.as('d')])
      .where('issue_links.link_type', '=', 'blocks').where('blocker.state', '=', 'opened').where('issue_links.target_id', 'in', ids)
      .groupBy('issue_links.target_id'))
    .unionAll(db.selectFrom('merge_requests_closing_issues')
      .select((eb) => [sql<number>`3`.as('kind'), 'issue_id as id', eb.fn.countAll<number>().as('a'), none.as('b'), none.as('c'), none.as('d')])
      .where('issue_id', 'in', ids).groupBy('issue_id'))
    .unionAll(db.selectFrom('issues')
      .select([sql<number>`4`.as('kind'), 'id', 'user_notes_count as a', 'upvotes_count as b', 'downvotes_count as c', 'total_time_spent as d'])
      .where('id', 'in', ids));
  // No ORDER BY: sorting the union cost SQLite more than sorting each issue's few assignees here.
});

export interface IssuePageFacts {
  assignees: Map<number, number[]>;
  labels: Map<number, LabelRow[]>;
  counts: Map<number, IssueCounts>;
}

/**
 * A page's assignees (in assignment order), labels (by title) and the entity's counts
 * (Gitlab::IssuableMetadata: comments that are not system notes, 👍 and 👎 awards, time spent, the
 * open issues blocking each one and the merge requests closing it).
 */
export async function issuePageFacts(db: Kysely<DB>, issueIds: readonly number[]): Promise<IssuePageFacts> {
  const assignees = new Map<number, number[]>();
  const counts = new Map<number, IssueCounts>();
  for (const id of issueIds) {
    assignees.set(id, []);
    counts.set(id, {
      user_notes_count: 0, upvotes: 0, downvotes: 0, total_time_spent: 0, blocking_issues_count: 0, closing_merge_requests_count: 0,
    });
  }
  const links: { target_id: number; label_id: number }[] = [];
  if (assignees.size > 0) {
    for (const f of await pageFactsById.all(db, assignees.keys())) {
      const kind = Number(f.kind);
      if (kind === 0) assignees.get(f.id)?.push(f.a);
      else if (kind === 1) links.push({ target_id: f.id, label_id: f.a });
      else {
        const c = counts.get(f.id);
        if (!c) continue;
        if (kind === 2) c.blocking_issues_count = Number(f.a);
        else if (kind === 3) c.closing_merge_requests_count = Number(f.a);
        else {
          c.user_notes_count = Number(f.a);
          c.upvotes = Number(f.b);
          c.downvotes = Number(f.c);
          c.total_time_spent = Number(f.d);
        }
      }
    }
  }
  // In assignment order, as assigneeIdsOf reads them.
  for (const list of assignees.values()) if (list.length > 1) list.sort((x, y) => x - y);
  return { assignees, labels: await labelsOfLinks(db, [...assignees.keys()], links), counts };
}

/** Assignee user ids of each issue, in assignment order (the Service orders issue_assignees by insertion). */
export async function assigneeIdsOf(db: Kysely<DB>, issueIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(issueIds.map((id) => [id, []]));
  for (const r of await assigneesById.all(db, issueIds)) out.get(r.issue_id)?.push(r.user_id);
  return out;
}

/** Labels on each target, by title: issues' and merge requests' through a compiled statement each, others' built each time. */
export async function labelsOfTargets(db: Kysely<DB>, targetType: string, ids: readonly number[]): Promise<Map<number, LabelRow[]>> {
  const out = new Map<number, LabelRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const linksById = targetType === 'Issue' ? issueLabelLinksById : targetType === 'MergeRequest' ? mergeRequestLabelLinksById : null;
  if (!linksById) {
    const rows = await db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
      .selectAll('labels').select('label_links.target_id')
      .where('label_links.target_type', '=', targetType).where('label_links.target_id', 'in', [...new Set(ids)])
      .orderBy('labels.title').execute();
    for (const { target_id, ...label } of rows) out.get(target_id)?.push(label);
    return out;
  }
  return labelsOfLinks(db, ids, await linksById.all(db, ids));
}

/** Each target's labels in the order of all of them by title, from its label links. */
export async function labelsOfLinks(
  db: Kysely<DB>, ids: readonly number[], links: readonly { target_id: number; label_id: number }[],
): Promise<Map<number, LabelRow[]>> {
  const out = new Map<number, LabelRow[]>(ids.map((id) => [id, []]));
  if (links.length === 0) return out;
  // Each target's labels in the order of all of them by title: what the join ordered by title gave.
  const labels = await labelsInTitleOrder(db, links.map((l) => l.label_id));
  const rank = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) rank.set(labels[i].id, i);
  const byTarget = new Map<number, number[]>();
  for (const l of links) {
    const at = rank.get(l.label_id);
    // A link whose label row is gone (the join found none) shows nothing.
    if (at === undefined) continue;
    const list = byTarget.get(l.target_id);
    if (list) list.push(at);
    else byTarget.set(l.target_id, [at]);
  }
  for (const [target, ranks] of byTarget) {
    const list = out.get(target);
    if (!list) continue;
    ranks.sort((a, b) => a - b);
    for (const at of ranks) list.push(labels[at]);
  }
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
  /** Merge requests that close it on merge, before the viewer's access is applied. */
  closing_merge_requests_count: number;
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
