/**
 * The read side of the merge request lists (the Service's MergeRequestsFinder on IssuableFinder
 * 15.2): the requests of projects whose merge requests the viewer may read (the feature enabled
 * for readers by visibility, at least private for Reporters and up who are members; archived
 * projects left out of group and instance lists unless asked), then the request's filters, one
 * small step each. The caller orders and paginates.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { ACCESS_LEVELS, VISIBILITY_LEVELS } from '../permissions/access.ts';
import { authorizedGroupLevels } from '../members/members.queries.ts';
import { containsPattern } from '../projects/project.finder.ts';

export type MergeRequestsQuery = SelectQueryBuilder<DB, 'merge_requests', MergeRequestRow>;
type EB = ExpressionBuilder<DB, 'merge_requests'>;

export type MergeRequestContainer =
  | { project: { id: number; canRead: boolean } }
  | { namespaceIds: number[] }
  | { instance: true };

export type Special<T> = { none: true } | { any: true } | { value: T };

export const MERGE_REQUEST_STATES = ['opened', 'closed', 'locked', 'merged', 'all'] as const;
export const MERGE_REQUEST_ORDERS = ['created_at', 'updated_at', 'title'] as const;
export type MergeRequestOrder = (typeof MERGE_REQUEST_ORDERS)[number];

export interface MergeRequestFilters {
  scope?: 'created_by_me' | 'assigned_to_me' | 'all';
  state?: (typeof MERGE_REQUEST_STATES)[number];
  labels?: Special<string[]>;
  milestone?: Special<string>;
  authorId?: number;
  authorUsername?: string;
  assignee?: Special<number>;
  assigneeUsername?: string;
  reviewer?: Special<number>;
  reviewerUsername?: string;
  myReactionEmoji?: Special<string>;
  iids?: number[];
  sourceBranch?: string;
  targetBranch?: string;
  search?: string;
  searchIn?: ('title' | 'description')[];
  wip?: boolean;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  nonArchived?: boolean;
  not?: {
    labels?: string[]; milestone?: string; authorId?: number; authorUsername?: string; assigneeId?: number; assigneeUsername?: string;
    reviewerId?: number; reviewerUsername?: string; myReactionEmoji?: string; sourceBranch?: string; targetBranch?: string;
  };
}

const never = sql<SqlBool>`1 = 0`;
const one = sql.lit(1).as('one');

export async function visibleMergeRequests(
  db: Kysely<DB>, viewer: UserRow | null, container: MergeRequestContainer, nonArchived: boolean,
): Promise<MergeRequestsQuery> {
  let qb: MergeRequestsQuery = db.selectFrom('merge_requests').selectAll('merge_requests');
  if ('project' in container) {
    qb = qb.where('merge_requests.project_id', '=', container.project.id);
    return container.project.canRead ? qb : qb.where(never);
  }
  if (viewer?.admin && 'instance' in container && !nonArchived) return qb;
  let q = db.selectFrom('projects').select('projects.id').where('projects.pending_delete', '=', 0);
  if ('namespaceIds' in container) q = q.where('projects.namespace_id', 'in', container.namespaceIds);
  if (nonArchived) q = q.where('projects.archived', '=', 0);
  if (viewer?.admin) q = q.where('projects.merge_requests_access_level', '>', 0);
  else {
    const groupLevels = viewer ? await authorizedGroupLevels(db, viewer.id) : new Map<number, number>();
    const direct = viewer ? await db.selectFrom('members').select(['source_id', 'access_level']).where('user_id', '=', viewer.id)
      .where('source_type', '=', 'Project').execute() : [];
    const memberProjects = direct.filter((m) => m.access_level >= ACCESS_LEVELS.reporter).map((m) => m.source_id);
    const memberGroups = [...groupLevels].filter(([, l]) => l >= ACCESS_LEVELS.reporter).map(([id]) => id);
    const minVisible = !viewer || viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal;
    q = q.where((eb) => eb.or([
      eb.and([eb('projects.visibility_level', '>=', minVisible), eb('projects.merge_requests_access_level', '>=', 20)]),
      ...(memberProjects.length > 0 || memberGroups.length > 0 ? [eb.and([
        eb('projects.merge_requests_access_level', '>=', 10),
        eb.or([
          ...(memberProjects.length > 0 ? [eb('projects.id', 'in', memberProjects)] : []),
          ...(memberGroups.length > 0 ? [eb('projects.namespace_id', 'in', memberGroups)] : []),
        ]),
      ])] : []),
    ]));
  }
  return qb.where('merge_requests.project_id', 'in', q);
}

const hasLabel = (eb: EB, title: string) => eb.exists(eb.selectFrom('label_links')
  .innerJoin('labels', 'labels.id', 'label_links.label_id').select(one)
  .where('label_links.target_type', '=', 'MergeRequest').whereRef('label_links.target_id', '=', 'merge_requests.id')
  .where('labels.title', '=', title));
const anyLabel = (eb: EB) => eb.exists(eb.selectFrom('label_links').select(one)
  .where('label_links.target_type', '=', 'MergeRequest').whereRef('label_links.target_id', '=', 'merge_requests.id'));
const milestoneTitled = (eb: EB, title: string) => eb.exists(eb.selectFrom('milestones').select(one)
  .whereRef('milestones.id', '=', 'merge_requests.milestone_id').where('milestones.title', '=', title));
const userNamed = (eb: EB, username: string) => eb.selectFrom('users').select('users.id')
  .where(sql`lower(users.username)`, '=', username.toLowerCase()).$asScalar();
const person = (eb: EB, table: 'merge_request_assignees' | 'merge_request_reviewers', user?: Expression<number> | number) => {
  let q = eb.selectFrom(table).select(one).whereRef(`${table}.merge_request_id`, '=', 'merge_requests.id');
  if (user !== undefined) q = q.where(`${table}.user_id`, '=', user);
  return eb.exists(q);
};
const reacted = (eb: EB, viewerId: number, name: string | null) => {
  let q = eb.selectFrom('award_emoji').select(one).where('award_emoji.awardable_type', '=', 'MergeRequest')
    .whereRef('award_emoji.awardable_id', '=', 'merge_requests.id').where('award_emoji.user_id', '=', viewerId);
  if (name !== null) q = q.where('award_emoji.name', '=', name);
  return eb.exists(q);
};

type PeopleTable = 'merge_request_assignees' | 'merge_request_reviewers';

function byPeople(qb: MergeRequestsQuery, table: PeopleTable, s?: Special<number>, username?: string) {
  if (s && 'none' in s) qb = qb.where((eb) => eb.not(person(eb, table)));
  else if (s && 'any' in s) qb = qb.where((eb) => person(eb, table));
  else if (s) qb = qb.where((eb) => person(eb, table, s.value));
  if (username !== undefined) qb = qb.where((eb) => person(eb, table, userNamed(eb, username)));
  return qb;
}

export function filterMergeRequests(qb: MergeRequestsQuery, f: MergeRequestFilters, viewer: UserRow | null): MergeRequestsQuery {
  if (f.scope && f.scope !== 'all') {
    if (!viewer) return qb.where(never);
    qb = f.scope === 'created_by_me' ? qb.where('merge_requests.author_id', '=', viewer.id)
      : qb.where((eb) => person(eb, 'merge_request_assignees', viewer.id));
  }
  if (f.state && f.state !== 'all') qb = qb.where('merge_requests.state', '=', f.state);
  const l = f.labels;
  if (l && 'none' in l) qb = qb.where((eb) => eb.not(anyLabel(eb)));
  else if (l && 'any' in l) qb = qb.where((eb) => anyLabel(eb));
  else if (l) for (const title of l.value) qb = qb.where((eb) => hasLabel(eb, title));
  for (const title of f.not?.labels ?? []) qb = qb.where((eb) => eb.not(hasLabel(eb, title)));
  const m = f.milestone;
  if (m && 'none' in m) qb = qb.where('merge_requests.milestone_id', 'is', null);
  else if (m && 'any' in m) qb = qb.where('merge_requests.milestone_id', 'is not', null);
  else if (m) qb = qb.where((eb) => milestoneTitled(eb, m.value));
  if (f.not?.milestone !== undefined) {
    const t = f.not.milestone;
    qb = qb.where((eb) => eb.or([eb('merge_requests.milestone_id', 'is', null), eb.not(milestoneTitled(eb, t))]));
  }
  if (f.authorId !== undefined) qb = qb.where('merge_requests.author_id', '=', f.authorId);
  if (f.authorUsername !== undefined) qb = qb.where('merge_requests.author_id', 'in', (eb) => userNamed(eb as EB, f.authorUsername!));
  if (f.not?.authorId !== undefined) qb = qb.where('merge_requests.author_id', '<>', f.not.authorId);
  if (f.not?.authorUsername !== undefined) {
    qb = qb.where('merge_requests.author_id', 'not in', (eb) => userNamed(eb as EB, f.not!.authorUsername!));
  }
  qb = byPeople(qb, 'merge_request_assignees', f.assignee, f.assigneeUsername);
  qb = byPeople(qb, 'merge_request_reviewers', f.reviewer, f.reviewerUsername);
  if (f.not?.assigneeId !== undefined) qb = qb.where((eb) => eb.not(person(eb, 'merge_request_assignees', f.not!.assigneeId!)));
  if (f.not?.assigneeUsername !== undefined) {
    qb = qb.where((eb) => eb.not(person(eb, 'merge_request_assignees', userNamed(eb, f.not!.assigneeUsername!))));
  }
  if (f.not?.reviewerId !== undefined) qb = qb.where((eb) => eb.not(person(eb, 'merge_request_reviewers', f.not!.reviewerId!)));
  if (f.not?.reviewerUsername !== undefined) {
    qb = qb.where((eb) => eb.not(person(eb, 'merge_request_reviewers', userNamed(eb, f.not!.reviewerUsername!))));
  }
  if (viewer) {
    const r = f.myReactionEmoji;
    if (r && 'none' in r) qb = qb.where((eb) => eb.not(reacted(eb, viewer.id, null)));
    else if (r && 'any' in r) qb = qb.where((eb) => reacted(eb, viewer.id, null));
    else if (r) qb = qb.where((eb) => reacted(eb, viewer.id, r.value));
    if (f.not?.myReactionEmoji !== undefined) qb = qb.where((eb) => eb.not(reacted(eb, viewer.id, f.not!.myReactionEmoji!)));
  }
  if (f.iids && f.iids.length > 0) qb = qb.where('merge_requests.iid', 'in', f.iids);
  if (f.sourceBranch !== undefined) qb = qb.where('merge_requests.source_branch', '=', f.sourceBranch);
  if (f.targetBranch !== undefined) qb = qb.where('merge_requests.target_branch', '=', f.targetBranch);
  if (f.not?.sourceBranch !== undefined) qb = qb.where('merge_requests.source_branch', '<>', f.not.sourceBranch);
  if (f.not?.targetBranch !== undefined) qb = qb.where('merge_requests.target_branch', '<>', f.not.targetBranch);
  if (f.wip !== undefined) qb = qb.where('merge_requests.draft', '=', f.wip ? 1 : 0);
  if (f.search) {
    const pattern = containsPattern(f.search);
    const fields = f.searchIn && f.searchIn.length > 0 ? f.searchIn : ['title', 'description'];
    qb = qb.where((eb) => eb.or(fields.map((field) => eb(
      sql`lower(coalesce(${sql.ref(`merge_requests.${field}`)}, ''))`, 'like', sql`${pattern} escape '\\'`,
    ))));
  }
  if (f.createdAfter) qb = qb.where('merge_requests.created_at', '>=', f.createdAfter);
  if (f.createdBefore) qb = qb.where('merge_requests.created_at', '<=', f.createdBefore);
  if (f.updatedAfter) qb = qb.where('merge_requests.updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) qb = qb.where('merge_requests.updated_at', '<=', f.updatedBefore);
  return qb;
}

const labelPriority = sql`(select min(label_priorities.priority) from label_links
  inner join label_priorities on label_priorities.label_id = label_links.label_id
  and label_priorities.project_id = merge_requests.project_id
  where label_links.target_type = 'MergeRequest' and label_links.target_id = merge_requests.id)`;

/**
 * The list orders; `label_priority` (milestones' lists) puts the best label priority first and
 * requests without one last, the newest breaking ties (MergeRequest.sort_by_attribute).
 */
export function orderMergeRequests(
  qb: MergeRequestsQuery, order: MergeRequestOrder | 'label_priority', dir: 'asc' | 'desc',
): MergeRequestsQuery {
  if (order === 'label_priority') {
    return qb.orderBy(sql`case when ${labelPriority} is null then 1 else 0 end`).orderBy(labelPriority, dir)
      .orderBy('merge_requests.id', 'desc');
  }
  return qb.orderBy(`merge_requests.${order}`, dir).orderBy('merge_requests.id', dir);
}

/** Opened, closed, merged and locked requests of a query (for milestones' and labels' counts). */
export async function countMergeRequestsByState(db: Kysely<DB>, qb: MergeRequestsQuery): Promise<Map<string, number>> {
  const inner = qb.clearSelect().clearOrderBy().select('merge_requests.state').as('found');
  const rows = await db.selectFrom(inner).select(['found.state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('found.state').execute();
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
