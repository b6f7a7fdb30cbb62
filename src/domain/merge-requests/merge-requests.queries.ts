/**
 * Reads and writes of merge requests and of what hangs off them (assignees, reviewers, approvals,
 * label links, resource events, diff versions), batched by request id where a page needs them.
 */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {
  MergeRequestDiffRow, MergeRequestRow, MergeRequestsTable,
} from '../../db/tables/merge-requests.ts';
import { ByIds } from '../../db/query-shape.ts';
import { cachedRowsByIds } from '../../db/read-cache.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { labelsOfLinks } from '../issues/issues.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type PeopleTable = 'merge_request_assignees' | 'merge_request_reviewers' | 'approvals';

// The reads a page of merge requests makes for its entity, compiled once per number of ids (db/query-shape.ts
// ByIds), as the issues' are: building and compiling them with Kysely on every request cost more than SQLite
// took to run them (issue 30's Measure: a page of 20 spent most of its time there).
const peopleById = (table: PeopleTable) => new ByIds((db, ids) => db.selectFrom(table).select(['merge_request_id', 'user_id'])
  .where('merge_request_id', 'in', ids).orderBy('merge_request_id').orderBy('created_at').orderBy('user_id'));
const peopleReads: Record<PeopleTable, ReturnType<typeof peopleById>> = {
  merge_request_assignees: peopleById('merge_request_assignees'),
  merge_request_reviewers: peopleById('merge_request_reviewers'),
  approvals: peopleById('approvals'),
};
/**
 * The counts the entity shows: counter columns the database keeps (migration
 * 2026-12-02T0500_issuable_counters), read by id beside whatever else a statement reads.
 */
const COUNT_COLUMNS = [
  'merge_requests.user_notes_count', 'merge_requests.upvotes_count as upvotes', 'merge_requests.downvotes_count as downvotes',
  'merge_requests.total_time_spent', 'merge_requests.unresolved_notes_count as unresolved_discussions',
] as const;
/** The counts of each request in one statement. */
const countsById = new ByIds((db, ids) => db.selectFrom('merge_requests')
  .select(['merge_requests.id', ...COUNT_COLUMNS]).where('merge_requests.id', 'in', ids));
/**
 * A page's counts and each request's latest diff version in one statement, as a list shows both on
 * every row: the newest merge_request_diffs row joined by its id beside the counts (one statement
 * fewer per page than reading them apart; issue 30's Measure).
 */
const countsAndLatestDiffById = new ByIds((db, ids) => db.selectFrom('merge_requests')
  .leftJoin('merge_request_diffs as d', (j) => j.on((eb) => eb('d.id', '=', eb.selectFrom('merge_request_diffs as x')
    .select((e) => e.fn.max('x.id').as('id')).whereRef('x.merge_request_id', '=', 'merge_requests.id'))))
  .select([
    'merge_requests.id', ...COUNT_COLUMNS,
    'd.id as diff_id', 'd.head_commit_sha', 'd.base_commit_sha', 'd.start_commit_sha', 'd.state as diff_state', 'd.real_size',
    'd.created_at as diff_created_at',
  ]).where('merge_requests.id', 'in', ids));
/** Assignees (kind 0) and reviewers (kind 1) of a page's requests in one statement, each in the order they were added. */
const assigneesAndReviewersById = new ByIds((db, ids) => db.selectFrom('merge_request_assignees')
  .select([sql<number>`0`.as('kind'), 'merge_request_id', 'user_id', 'created_at']).where('merge_request_id', 'in', ids)
  .unionAll(db.selectFrom('merge_request_reviewers')
    .select([sql<number>`1`.as('kind'), 'merge_request_id', 'user_id', 'created_at']).where('merge_request_id', 'in', ids))
  .orderBy('kind').orderBy('merge_request_id').orderBy('created_at').orderBy('user_id'));
/**
 * What a page of requests shows beside its rows in one statement (issue 30's Measure): its
 * assignees (kind 0) and reviewers (kind 1) with when each was added, and its label links (kind 2,
 * the label id in user_id).
 */
const pageFactsById = new ByIds((db, ids) => db.selectFrom('merge_request_assignees')
  .select([sql<number>`0`.as('kind'), 'merge_request_id', 'user_id', 'created_at']).where('merge_request_id', 'in', ids)
  .unionAll(db.selectFrom('merge_request_reviewers')
    .select([sql<number>`1`.as('kind'), 'merge_request_id', 'user_id', 'created_at']).where('merge_request_id', 'in', ids))
  .unionAll(db.selectFrom('label_links')
    // No created_at here: label_links_target_label then answers from the index alone.
    .select([sql<number>`2`.as('kind'), 'target_id as merge_request_id', 'label_id as user_id', sql<string>`cast(null as text)`.as('created_at')])
    .where('target_type', '=', 'MergeRequest').where('target_id', 'in', ids)));
// No ORDER BY: sorting the union cost SQLite more than sorting each request's few people in mergeRequestPageFacts.
const mergeRulesById = new ByIds((db, ids) => db.selectFrom('projects')
  .select(['id', 'merge_method', 'only_allow_merge_if_all_discussions_are_resolved', 'only_allow_merge_if_pipeline_succeeds',
    'allow_merge_on_skipped_pipeline']).where('id', 'in', ids));

/** The merge rules the entity's detailed merge status reads, of each project. */
export function mergeRulesOfProjects(db: Kysely<DB>, projectIds: readonly number[]) {
  // Remembered until the next write: every page of a project's requests reads its one project.
  return cachedRowsByIds(db, 'merge-rules', projectIds, (missing) => mergeRulesById.all(db, missing));
}

/**
 * The head pipeline of each of a page's requests (MergeRequest#find_actual_head_pipeline): the
 * newest pipeline at its newest diff's head, of its source branch or its own merge request
 * pipelines. One statement for the page, a scalar subquery a request (ci_pipelines_project_sha and
 * ci_pipelines_merge_request answer it), instead of one statement a row (issue 33).
 */
const headPipelinesById = new ByIds((db, ids) => db.selectFrom('merge_requests as mr')
  .innerJoin('merge_request_diffs as d', (j) => j.on((eb) => eb('d.id', '=', eb.selectFrom('merge_request_diffs as x')
    .select((e) => e.fn.max('x.id').as('id')).whereRef('x.merge_request_id', '=', 'mr.id'))))
  .innerJoin('ci_pipelines as p', (j) => j.on((eb) => eb('p.id', '=', eb.selectFrom('ci_pipelines as c').select('c.id')
    .whereRef('c.sha', '=', 'd.head_commit_sha')
    .where((e) => e.or([
      e.and([e('c.project_id', '=', e.ref('mr.source_project_id')), e('c.ref', '=', e.ref('mr.source_branch'))]),
      e('c.merge_request_id', '=', e.ref('mr.id')),
    ]))
    .orderBy('c.id', 'desc').limit(1))))
  .select([
    'mr.id as merge_request_id', 'p.id', 'p.iid', 'p.project_id', 'p.sha', 'p.ref', 'p.status', 'p.source',
    'p.created_at', 'p.updated_at', 'p.started_at', 'p.finished_at',
  ])
  .where('mr.id', 'in', ids).where('mr.source_project_id', 'is not', null));

/** Request id → its head pipeline, for those of `mrIds` that have one. */
export async function headPipelinesOf(db: Kysely<DB>, mrIds: readonly number[]) {
  const out = new Map<number, Awaited<ReturnType<typeof headPipelinesById.all>>[number]>();
  for (const r of await headPipelinesById.all(db, mrIds)) out.set(r.merge_request_id, r);
  return out;
}

/**
 * What MergeRequest#collaborative_push_possible? reads of a page's fork requests, in one
 * statement: each project's visibility, and the protected branch patterns of the source projects
 * (one row a pattern; a project without one has a single row with a null name).
 */
export function collaborationFactsOf(db: Db, projectIds: readonly number[], sourceProjectIds: readonly number[]) {
  return db.selectFrom('projects as p')
    .leftJoin('protected_branches as pb', (j) => j.onRef('pb.project_id', '=', 'p.id').on('p.id', 'in', [...sourceProjectIds]))
    .select(['p.id', 'p.visibility_level', 'pb.name as protected_branch'])
    .where('p.id', 'in', [...projectIds]).where('p.pending_delete', '=', 0)
    .execute();
}

/** Each request's newest diff version (merge_request_diffs_request_head). */
const latestDiffsById = new ByIds((db, ids) => db.selectFrom('merge_request_diffs').selectAll('merge_request_diffs')
  .where('merge_request_diffs.merge_request_id', 'in', ids)
  .where('merge_request_diffs.id', '=', (eb) => eb.selectFrom('merge_request_diffs as d').select((e) => e.fn.max('d.id').as('id'))
    .whereRef('d.merge_request_id', '=', 'merge_request_diffs.merge_request_id')));

export function findMergeRequestByIid(db: Db, projectId: number, iid: number): Promise<MergeRequestRow | undefined> {
  return db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
}

export function findMergeRequestsByIds(db: Db, ids: readonly number[]): Promise<MergeRequestRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('merge_requests').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}

export function findMergeRequestById(db: Db, id: number): Promise<MergeRequestRow | undefined> {
  return db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The open request of a source branch into a project (the one the partial unique index allows). */
export function openMergeRequestOfBranch(
  db: Db, projectId: number, sourceProjectId: number, sourceBranch: string, targetBranch: string,
): Promise<MergeRequestRow | undefined> {
  return db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId)
    .where('source_project_id', '=', sourceProjectId).where('source_branch', '=', sourceBranch)
    .where('target_branch', '=', targetBranch).where('state', 'in', ['opened', 'locked']).executeTakeFirst();
}

/** Open requests whose source or target is one of these branches of the project (after a push). */
export function openMergeRequestsOfBranches(db: Db, projectId: number, branches: readonly string[]): Promise<MergeRequestRow[]> {
  if (branches.length === 0) return Promise.resolve([]);
  return db.selectFrom('merge_requests').selectAll().where('state', 'in', ['opened', 'locked']).where((eb) => eb.or([
    eb.and([eb('source_project_id', '=', projectId), eb('source_branch', 'in', [...branches])]),
    eb.and([eb('project_id', '=', projectId), eb('target_branch', 'in', [...branches])]),
  ])).orderBy('id').execute();
}

/**
 * Project#merge_requests_allowing_collaboration: open requests from `sourceProjectId` into another
 * project whose author allowed the target's mergers to push (`branch`: that source branch only).
 * Bounded: a fork with more such requests than this is judged by the first ones.
 */
export function collaborationRequestsFrom(db: Db, sourceProjectId: number, branch?: string): Promise<MergeRequestRow[]> {
  let q = db.selectFrom('merge_requests').selectAll().where('source_project_id', '=', sourceProjectId)
    .where('project_id', '!=', sourceProjectId).where('state', '=', 'opened').where('allow_collaboration', '=', 1);
  if (branch !== undefined) q = q.where('source_branch', '=', branch);
  return q.orderBy('id').limit(100).execute();
}

export function insertMergeRequest(trx: Transaction<DB>, values: Insertable<MergeRequestsTable>): Promise<MergeRequestRow> {
  return trx.insertInto('merge_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateMergeRequestRow(db: Db, id: number, set: Updateable<MergeRequestsTable>): Promise<MergeRequestRow> {
  return db.updateTable('merge_requests').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/**
 * The open requests between `projectId` and another project (MergeRequest.from_and_to_forks with
 * .opened): from it into others, and — unless `into` is false — from others into it; none into
 * `exceptTargets`.
 */
export function openForkRequestsOf(db: Db, projectId: number, into: boolean, exceptTargets: number[] = []): Promise<MergeRequestRow[]> {
  let qb = db.selectFrom('merge_requests').selectAll().where('state', '=', 'opened')
    .where((eb) => eb.or([
      eb.and([eb('source_project_id', '=', projectId), eb('project_id', '!=', projectId)]),
      ...(into ? [eb.and([eb('project_id', '=', projectId), eb('source_project_id', '!=', projectId)])] : []),
    ]));
  if (exceptTargets.length > 0) qb = qb.where('project_id', 'not in', exceptTargets);
  return qb.orderBy('id').execute();
}

/** Moves the row only while it still has `expected` as its state (a merge racing a close). */
export function updateMergeRequestIf(
  db: Db, id: number, expected: { state?: string; merge_status_heads?: string | null }, set: Updateable<MergeRequestsTable>,
): Promise<MergeRequestRow | undefined> {
  let q = db.updateTable('merge_requests').set(set).where('id', '=', id);
  if (expected.state !== undefined) q = q.where('state', '=', expected.state);
  return q.returningAll().executeTakeFirst();
}

export async function deleteMergeRequestRow(trx: Transaction<DB>, id: number): Promise<void> {
  // Rows that name the request without a foreign key (polymorphic targets) go with it.
  await trx.deleteFrom('label_links').where('target_type', '=', 'MergeRequest').where('target_id', '=', id).execute();
  await trx.deleteFrom('notes').where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', id).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'MergeRequest').where('awardable_id', '=', id).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'MergeRequest').where('subscribable_id', '=', id).execute();
  await trx.deleteFrom('todos').where('target_type', '=', 'MergeRequest').where('target_id', '=', id).execute();
  await trx.deleteFrom('events').where('target_type', '=', 'MergeRequest').where('target_id', '=', id).execute();
  for (const table of ['resource_label_events', 'resource_milestone_events', 'resource_state_events', 'timelogs'] as const) {
    await trx.deleteFrom(table).where('merge_request_id', '=', id).execute();
  }
  await trx.deleteFrom('merge_requests').where('id', '=', id).execute();
}

export async function replacePeople(trx: Transaction<DB>, table: PeopleTable, mrId: number, userIds: readonly number[], now: string) {
  await trx.deleteFrom(table).where('merge_request_id', '=', mrId).execute();
  if (userIds.length === 0) return;
  const rows = [...new Set(userIds)].map((user_id) => ({ merge_request_id: mrId, user_id, created_at: now }));
  await trx.insertInto(table).values(rows).execute();
}

/** Adds one person; false when they were there already (the primary key decides). */
export async function addPerson(db: Db, table: PeopleTable, mrId: number, userId: number, now: string): Promise<boolean> {
  const rows = await db.insertInto(table).values({ merge_request_id: mrId, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['merge_request_id', 'user_id']).doNothing()).returning('user_id').execute();
  return rows.length > 0;
}

export async function removePerson(db: Db, table: PeopleTable, mrId: number, userId: number): Promise<boolean> {
  const r = await db.deleteFrom(table).where('merge_request_id', '=', mrId).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** User ids of each request in the table, in the order they were added. */
export async function peopleOf(db: Db, table: PeopleTable, mrIds: readonly number[]): Promise<Map<number, number[]>> {
  const ids = [...new Set(mrIds)];
  const out = new Map<number, number[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  for (const r of await peopleReads[table].all(db as Kysely<DB>, ids)) out.get(r.merge_request_id)?.push(r.user_id);
  return out;
}

export interface MergeRequestCounts {
  user_notes_count: number;
  upvotes: number;
  downvotes: number;
  total_time_spent: number;
  /** Resolvable threads not yet resolved. */
  unresolved_discussions: number;
}

type CountsRow = { [K in keyof MergeRequestCounts]: number | string | null };

function countsOf(r: CountsRow): MergeRequestCounts {
  return {
    user_notes_count: Number(r.user_notes_count ?? 0),
    upvotes: Number(r.upvotes ?? 0),
    downvotes: Number(r.downvotes ?? 0),
    total_time_spent: Number(r.total_time_spent ?? 0),
    unresolved_discussions: Number(r.unresolved_discussions ?? 0),
  };
}

const NO_COUNTS: MergeRequestCounts = { user_notes_count: 0, upvotes: 0, downvotes: 0, total_time_spent: 0, unresolved_discussions: 0 };

/** The counts the entity shows (Gitlab::IssuableMetadata) for a page of requests. */
export async function mergeRequestCounts(db: Db, mrIds: readonly number[]): Promise<Map<number, MergeRequestCounts>> {
  const out = new Map<number, MergeRequestCounts>(mrIds.map((id) => [id, NO_COUNTS]));
  if (out.size === 0) return out;
  for (const r of await countsById.all(db as Kysely<DB>, out.keys())) out.set(r.id, countsOf(r));
  return out;
}

/** A page's counts (as mergeRequestCounts) and latest diff versions (as latestDiffsOf) read together. */
export async function mergeRequestCountsAndLatestDiffs(db: Db, mrIds: readonly number[]): Promise<{
  counts: Map<number, MergeRequestCounts>; latest: Map<number, MergeRequestDiffRow>;
}> {
  const counts = new Map<number, MergeRequestCounts>(mrIds.map((id) => [id, NO_COUNTS]));
  const latest = new Map<number, MergeRequestDiffRow>();
  if (counts.size === 0) return { counts, latest };
  for (const r of await countsAndLatestDiffById.all(db as Kysely<DB>, counts.keys())) {
    counts.set(r.id, countsOf(r));
    if (r.diff_id !== null) {
      latest.set(r.id, {
        id: r.diff_id, merge_request_id: r.id, head_commit_sha: r.head_commit_sha!, base_commit_sha: r.base_commit_sha,
        start_commit_sha: r.start_commit_sha, state: r.diff_state!, real_size: r.real_size, created_at: r.diff_created_at!,
      });
    }
  }
  return { counts, latest };
}

/** The assignees and the reviewers of a page's requests (as peopleOf for each table) in one statement. */
export async function assigneesAndReviewersOf(db: Db, mrIds: readonly number[]): Promise<{
  assignees: Map<number, number[]>; reviewers: Map<number, number[]>;
}> {
  const assignees = new Map<number, number[]>(mrIds.map((id) => [id, []]));
  const reviewers = new Map<number, number[]>(mrIds.map((id) => [id, []]));
  if (assignees.size === 0) return { assignees, reviewers };
  for (const r of await assigneesAndReviewersById.all(db as Kysely<DB>, assignees.keys())) {
    (Number(r.kind) === 0 ? assignees : reviewers).get(r.merge_request_id)?.push(r.user_id);
  }
  return { assignees, reviewers };
}

/** A page's assignees and reviewers (as assigneesAndReviewersOf) and labels by title (as labelsOfTargets), read together. */
export async function mergeRequestPageFacts(db: Db, mrIds: readonly number[]): Promise<{
  assignees: Map<number, number[]>; reviewers: Map<number, number[]>; labels: Map<number, LabelRow[]>;
}> {
  const assignees = new Map<number, number[]>(mrIds.map((id) => [id, []]));
  const reviewers = new Map<number, number[]>(mrIds.map((id) => [id, []]));
  const links: { target_id: number; label_id: number }[] = [];
  if (assignees.size > 0) {
    const people = [];
    for (const r of await pageFactsById.all(db as Kysely<DB>, assignees.keys())) {
      if (Number(r.kind) === 2) links.push({ target_id: r.merge_request_id, label_id: r.user_id });
      else people.push(r);
    }
    // Each request's people in the order they were added (created_at, then user id), as peopleOf reads them.
    people.sort((x, y) => (x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : x.user_id - y.user_id));
    for (const r of people) (Number(r.kind) === 0 ? assignees : reviewers).get(r.merge_request_id)?.push(r.user_id);
  }
  return { assignees, reviewers, labels: await labelsOfLinks(db as Kysely<DB>, [...assignees.keys()], links) };
}

/**
 * Which of these requests the user is subscribed to (Subscribable#subscribed?): an explicit row
 * decides; without one, taking part (author, assignee, reviewer, commenter) subscribes.
 */
export async function subscribedMergeRequestIds(db: Db, userId: number, mrIds: readonly number[]): Promise<Set<number>> {
  const ids = [...new Set(mrIds)];
  if (ids.length === 0) return new Set();
  const [explicit, participating] = await Promise.all([
    db.selectFrom('subscriptions').select(['subscribable_id', 'subscribed'])
      .where('subscribable_type', '=', 'MergeRequest').where('subscribable_id', 'in', ids).where('user_id', '=', userId).execute(),
    db.selectFrom('merge_requests').select('id').where('id', 'in', ids).where((eb) => eb.or([
      eb('author_id', '=', userId),
      eb.exists(eb.selectFrom('merge_request_assignees').select(sql.lit(1).as('one'))
        .whereRef('merge_request_assignees.merge_request_id', '=', 'merge_requests.id')
        .where('merge_request_assignees.user_id', '=', userId)),
      eb.exists(eb.selectFrom('merge_request_reviewers').select(sql.lit(1).as('one'))
        .whereRef('merge_request_reviewers.merge_request_id', '=', 'merge_requests.id')
        .where('merge_request_reviewers.user_id', '=', userId)),
      eb.exists(eb.selectFrom('notes').select(sql.lit(1).as('one')).where('notes.noteable_type', '=', 'MergeRequest')
        .whereRef('notes.noteable_id', '=', 'merge_requests.id').where('notes.author_id', '=', userId).where('notes.system', '=', 0)),
    ])).execute(),
  ]);
  const decided = new Map(explicit.map((r) => [r.subscribable_id, r.subscribed === 1]));
  const out = new Set<number>();
  for (const r of participating) if (!decided.has(r.id)) out.add(r.id);
  for (const [id, on] of decided) if (on) out.add(id);
  return out;
}

/** Authors of the request's comments (participants). */
export async function commenterIds(db: Db, mrId: number): Promise<number[]> {
  const rows = await db.selectFrom('notes').select('author_id').distinct().where('noteable_type', '=', 'MergeRequest')
    .where('noteable_id', '=', mrId).where('system', '=', 0).execute();
  return rows.map((r) => r.author_id);
}

export async function labelIdsOf(db: Db, mrId: number): Promise<number[]> {
  const rows = await db.selectFrom('label_links').select('label_id').where('target_type', '=', 'MergeRequest')
    .where('target_id', '=', mrId).execute();
  return rows.map((r) => r.label_id);
}

export async function linkLabels(trx: Transaction<DB>, mrId: number, labelIds: readonly number[], now: string): Promise<void> {
  if (labelIds.length === 0) return;
  await trx.insertInto('label_links').values(labelIds.map((label_id) => ({
    label_id, target_type: 'MergeRequest', target_id: mrId, created_at: now, updated_at: now,
  }))).onConflict((oc) => oc.columns(['target_type', 'target_id', 'label_id']).doNothing()).execute();
}

export async function unlinkLabels(trx: Transaction<DB>, mrId: number, labelIds: readonly number[]): Promise<void> {
  if (labelIds.length === 0) return;
  await trx.deleteFrom('label_links').where('target_type', '=', 'MergeRequest').where('target_id', '=', mrId)
    .where('label_id', 'in', [...labelIds]).execute();
}

export async function recordLabelEvents(
  trx: Transaction<DB>, mrId: number, userId: number, changes: { added: readonly number[]; removed: readonly number[] }, now: string,
): Promise<void> {
  const rows = [
    ...changes.added.map((label_id) => ({ label_id, action: 'add' })),
    ...changes.removed.map((label_id) => ({ label_id, action: 'remove' })),
  ].map((r) => ({ ...r, issue_id: null, merge_request_id: mrId, user_id: userId, created_at: now }));
  if (rows.length > 0) await trx.insertInto('resource_label_events').values(rows).execute();
}

export async function recordMilestoneEvent(
  trx: Transaction<DB>, mrId: number, userId: number, e: { milestoneId: number; action: 'add' | 'remove'; state: string }, now: string,
): Promise<void> {
  await trx.insertInto('resource_milestone_events').values({
    issue_id: null, merge_request_id: mrId, milestone_id: e.milestoneId, user_id: userId, action: e.action, state: e.state, created_at: now,
  }).execute();
}

export async function recordStateEvent(
  trx: Db, mrId: number, userId: number, state: string, now: string, sourceCommit: string | null = null,
): Promise<void> {
  await trx.insertInto('resource_state_events').values({
    issue_id: null, merge_request_id: mrId, user_id: userId, state, source_commit: sourceCommit, source_merge_request_id: null,
    created_at: now,
  }).execute();
}

/** The request's diff versions, newest first. */
export function diffVersionsOf(db: Db, mrId: number): Promise<MergeRequestDiffRow[]> {
  return db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', '=', mrId).orderBy('id', 'desc').execute();
}

export function latestDiffsOf(db: Db, mrIds: readonly number[]): Promise<MergeRequestDiffRow[]> {
  const ids = [...new Set(mrIds)];
  if (ids.length === 0) return Promise.resolve([]);
  return latestDiffsById.all(db as Kysely<DB>, ids);
}

/** Commit rows per statement when a version's commits are written. */
const COMMITS_PER_INSERT = 500;

/**
 * A new diff version with its commits (newest first); none when the request already has one for
 * this head (a repeated check).
 */
export async function insertDiffVersion(
  db: Db, v: {
    mrId: number; head: string; base: string | null; start: string | null; state: string; realSize: string | null; now: string;
    commits: readonly string[];
  },
): Promise<void> {
  const row = await db.insertInto('merge_request_diffs').values({
    merge_request_id: v.mrId, head_commit_sha: v.head, base_commit_sha: v.base, start_commit_sha: v.start, state: v.state,
    real_size: v.realSize, created_at: v.now,
  }).onConflict((oc) => oc.columns(['merge_request_id', 'head_commit_sha']).doNothing()).returning('id').executeTakeFirst();
  if (!row) return;
  for (let start = 0; start < v.commits.length; start += COMMITS_PER_INSERT) {
    await db.insertInto('merge_request_diff_commits').values(v.commits.slice(start, start + COMMITS_PER_INSERT).map((sha, i) => ({
      merge_request_diff_id: row.id, sha, relative_order: start + i,
    }))).execute();
  }
}

/**
 * The project's merge requests that hold a commit (MergeRequest.by_related_commit_sha): in one of
 * their diff versions, or as their merge or squash commit; newest first.
 */
export function mergeRequestsWithCommit(db: Kysely<DB>, projectId: number, sha: string) {
  return db.selectFrom('merge_requests').selectAll('merge_requests').where('merge_requests.project_id', '=', projectId)
    .where((eb) => eb.or([
      eb('merge_requests.merge_commit_sha', '=', sha),
      eb('merge_requests.squash_commit_sha', '=', sha),
      eb('merge_requests.id', 'in', eb.selectFrom('merge_request_diff_commits')
        .innerJoin('merge_request_diffs', 'merge_request_diffs.id', 'merge_request_diff_commits.merge_request_diff_id')
        .select('merge_request_diffs.merge_request_id').where('merge_request_diff_commits.sha', '=', sha)),
    ]))
    .orderBy('merge_requests.created_at', 'desc').orderBy('merge_requests.id', 'desc');
}

/** Issues of the project by iid (for `Closes #1`). */
export function issuesByIids(db: Db, projectId: number, iids: readonly number[]) {
  if (iids.length === 0) return Promise.resolve([]);
  return db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', 'in', [...iids]).orderBy('iid').execute();
}

/** The request's pending todos are done once it is closed or merged (TodoService#close_merge_request, #merge_merge_request). */
export async function resolveTodosOf(db: Db, mrId: number, now: string): Promise<void> {
  await db.updateTable('todos').set({ state: 'done', updated_at: now }).where('target_type', '=', 'MergeRequest')
    .where('target_id', '=', mrId).where('state', '=', 'pending').execute();
}

/** The issue's close just recorded was the request's doing (ResourceStateEvent#source_merge_request). */
export async function markIssueClosedBy(db: Db, issueId: number, mrId: number): Promise<void> {
  await db.updateTable('resource_state_events').set({ source_merge_request_id: mrId })
    .where('issue_id', '=', issueId).where('state', '=', 'closed').where('source_merge_request_id', 'is', null).execute();
}

/** Open requests assigned to the user, and those asking the user's review (User#assigned_open_merge_requests_count …). */
export async function openMergeRequestCountsOf(db: Db, userId: number): Promise<{ assigned: number; reviews: number }> {
  const count = async (table: 'merge_request_assignees' | 'merge_request_reviewers') => {
    const row = await db.selectFrom(table).innerJoin('merge_requests', 'merge_requests.id', `${table}.merge_request_id`)
      .select((eb) => eb.fn.countAll<number | string>().as('n')).where(`${table}.user_id`, '=', userId)
      .where('merge_requests.state', '=', 'opened').executeTakeFirst();
    return Number(row?.n ?? 0);
  };
  const [assigned, reviews] = await Promise.all([count('merge_request_assignees'), count('merge_request_reviewers')]);
  return { assigned, reviews };
}

/** Soft-deleted users' merge requests stay, written by the ghost user (Users::MigrateToGhostUserService). */
export async function reassignMergeRequests(trx: Transaction<DB>, fromUserId: number, toUserId: number): Promise<void> {
  await trx.updateTable('merge_requests').set({ author_id: toUserId }).where('author_id', '=', fromUserId).execute();
  await trx.updateTable('merge_requests').set({ merged_by_id: toUserId }).where('merged_by_id', '=', fromUserId).execute();
  await trx.updateTable('merge_requests').set({ closed_by_id: toUserId }).where('closed_by_id', '=', fromUserId).execute();
}

/** Open requests of a branch waiting for its pipeline to merge them (AutoMergeProcessWorker's candidates). */
export function autoMergeCandidates(db: Db, projectId: number, branch: string): Promise<MergeRequestRow[]> {
  return db.selectFrom('merge_requests').selectAll().where('source_project_id', '=', projectId).where('source_branch', '=', branch)
    .where('state', '=', 'opened').where('merge_when_pipeline_succeeds', '=', 1).orderBy('id').execute();
}

/** The newest pipeline of a branch, or of the request's own merge request pipelines, at a commit (the request's head pipeline). */
export function headPipelineOf(db: Db, projectId: number, ref: string, mrId: number, sha: string) {
  return db.selectFrom('ci_pipelines').select(['id', 'status']).where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('ref', '=', ref), eb('merge_request_id', '=', mrId)]))
    .where('sha', '=', sha).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/**
 * The pipelines of a request, newest first (MergeRequest#all_pipelines): its source branch's at
 * its commits, and its own merge request pipelines.
 */
export function pipelinesOfCommits(db: Db, projectId: number, ref: string, mrId: number, shas: readonly string[]) {
  return db.selectFrom('ci_pipelines').select(['id', 'iid', 'project_id', 'sha', 'ref', 'status', 'source', 'created_at', 'updated_at'])
    .where((eb) => eb.or([
      eb.and([eb('project_id', '=', projectId), eb('ref', '=', ref), eb('sha', 'in', shas.length > 0 ? [...shas] : [''])]),
      eb('merge_request_id', '=', mrId),
    ]))
    .orderBy('id', 'desc');
}

/** Time spent on a request, in seconds. */
export async function totalTimeSpentOn(db: Db, mrId: number): Promise<number> {
  const row = await db.selectFrom('timelogs').select((eb) => eb.fn.sum<number>('time_spent').as('n'))
    .where('merge_request_id', '=', mrId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertTimelog(db: Db, mrId: number, userId: number, seconds: number, summary: string | null, now: string) {
  await db.insertInto('timelogs').values({
    issue_id: null, merge_request_id: mrId, user_id: userId, time_spent: seconds, spent_at: now, summary, created_at: now, updated_at: now,
  }).execute();
}

export async function setSubscription(db: Db, userId: number, mr: MergeRequestRow, subscribed: boolean, now: string): Promise<void> {
  await db.insertInto('subscriptions').values({
    user_id: userId, subscribable_type: 'MergeRequest', subscribable_id: mr.id, project_id: mr.project_id,
    subscribed: subscribed ? 1 : 0, created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['subscribable_type', 'subscribable_id', 'user_id'])
    .doUpdateSet({ subscribed: subscribed ? 1 : 0, updated_at: now })).execute();
}

/** The project's requests whose title or description names `#iid` (candidates: the caller reads the references). */
export function requestsNamingIssue(db: Db, projectId: number, iid: number): Promise<MergeRequestRow[]> {
  const pattern = `%#${iid}%`;
  return db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('description', 'like', pattern), eb('title', 'like', pattern)])).orderBy('id').execute();
}

/** Open requests from a branch, newest first (Ci::Pipeline#all_merge_requests_by_recency.opened). */
export function openMergeRequestsFromBranch(db: Db, projectId: number, branch: string, limit: number): Promise<MergeRequestRow[]> {
  return db.selectFrom('merge_requests').selectAll().where('source_project_id', '=', projectId).where('source_branch', '=', branch)
    .where('state', '=', 'opened').orderBy('id', 'desc').limit(limit).execute();
}

/** The diff version of a request at a head commit (Ci::Pipeline#merge_request_diff). */
export function diffAtHead(db: Db, mrId: number, head: string): Promise<MergeRequestDiffRow | undefined> {
  return db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', '=', mrId).where('head_commit_sha', '=', head)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** Replaces the issues a request closes on merge (MergeRequest#cache_merge_request_closes_issues!). */
export async function replaceClosingIssues(trx: Db, mrId: number, issueIds: readonly number[], now: string): Promise<void> {
  await trx.deleteFrom('merge_requests_closing_issues').where('merge_request_id', '=', mrId).execute();
  if (issueIds.length === 0) return;
  await trx.insertInto('merge_requests_closing_issues')
    .values([...new Set(issueIds)].map((issue_id) => ({ merge_request_id: mrId, issue_id, created_at: now, updated_at: now })))
    .execute();
}

/** The merge requests feature level and namespace of each project (whose closing requests an issue counts). */
export function mergeRequestAccessOfProjects(db: Db, projectIds: readonly number[]) {
  if (projectIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('projects').select(['id', 'namespace_id', 'merge_requests_access_level'])
    .where('id', 'in', [...projectIds]).execute();
}
