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
import { QueryShape } from '../../db/query-shape.ts';

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

/** The merge_requests table before anything is selected: where the filters start. */
export type MergeRequestsFrom = SelectQueryBuilder<DB, 'merge_requests', object>;
/**
 * A merge request list's filters and order, compiled once per shape (db/query-shape.ts), as the
 * issues lists are: building and compiling the list's query with Kysely on every request cost
 * more than SQLite took to run it (issue 30's Measure).
 */
export type MergeRequestsShape = QueryShape<MergeRequestsFrom>;

/** Binds each value at its own position: a list's length is part of the shape, its values are not. */
const args = <T>(shape: MergeRequestsShape, values: readonly T[]): T[] => values.map((v) => shape.arg(v));

/**
 * The requests the viewer may see in the container, before the request's filters. `inline`: for
 * a query built once with Kysely (visibleMergeRequests) rather than a ShapedList's statement.
 */
export async function mergeRequestsShape(
  db: Kysely<DB>, viewer: UserRow | null, container: MergeRequestContainer, nonArchived: boolean, opts: { inline?: boolean } = {},
): Promise<MergeRequestsShape> {
  const shape: MergeRequestsShape = new QueryShape(opts);
  if ('project' in container) {
    const projectId = shape.arg(container.project.id);
    shape.step('project', (qb) => qb.where('merge_requests.project_id', '=', projectId));
    if (!container.project.canRead) shape.step('never', (qb) => qb.where(never));
    return shape;
  }
  if (viewer?.admin && 'instance' in container && !nonArchived) return shape;
  const namespaceIds = 'namespaceIds' in container ? args(shape, container.namespaceIds) : null;
  const tokens = [namespaceIds ? `ns${namespaceIds.length}` : 'all', nonArchived ? 'unarchived' : 'archived too'];
  let where: (eb: ExpressionBuilder<DB, 'projects'>) => Expression<SqlBool>;
  if (viewer?.admin) {
    tokens.push('admin');
    where = (eb) => eb('projects.merge_requests_access_level', '>', 0);
  } else {
    const groupLevels = viewer ? await authorizedGroupLevels(db, viewer.id) : new Map<number, number>();
    const direct = viewer ? await db.selectFrom('members').select(['source_id', 'access_level']).where('user_id', '=', viewer.id)
      .where('source_type', '=', 'Project').execute() : [];
    const minVisible = shape.arg(!viewer || viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal);
    const memberProjects = args(shape, direct.filter((m) => m.access_level >= ACCESS_LEVELS.reporter).map((m) => m.source_id));
    const memberGroups = args(shape, [...groupLevels].filter(([, l]) => l >= ACCESS_LEVELS.reporter).map(([id]) => id));
    tokens.push(`members${memberProjects.length}/${memberGroups.length}`);
    where = (eb) => eb.or([
      eb.and([eb('projects.visibility_level', '>=', minVisible), eb('projects.merge_requests_access_level', '>=', 20)]),
      ...(memberProjects.length > 0 || memberGroups.length > 0 ? [eb.and([
        eb('projects.merge_requests_access_level', '>=', 10),
        eb.or([
          ...(memberProjects.length > 0 ? [eb('projects.id', 'in', memberProjects)] : []),
          ...(memberGroups.length > 0 ? [eb('projects.namespace_id', 'in', memberGroups)] : []),
        ]),
      ])] : []),
    ]);
  }
  shape.step(`projects:${tokens.join(',')}`, (qb) => qb.where('merge_requests.project_id', 'in', (eb) => {
    let q = eb.selectFrom('projects').select('projects.id').where('projects.pending_delete', '=', 0);
    if (namespaceIds) q = q.where('projects.namespace_id', 'in', namespaceIds);
    if (nonArchived) q = q.where('projects.archived', '=', 0);
    return q.where(where);
  }));
  return shape;
}

/** The query an inline shape stands for, every column of `merge_requests` selected. */
export function mergeRequestsQuery(db: Kysely<DB>, shape: MergeRequestsShape): MergeRequestsQuery {
  return shape.apply(db.selectFrom('merge_requests')).selectAll('merge_requests');
}

export async function visibleMergeRequests(
  db: Kysely<DB>, viewer: UserRow | null, container: MergeRequestContainer, nonArchived: boolean,
): Promise<MergeRequestsQuery> {
  return mergeRequestsQuery(db, await mergeRequestsShape(db, viewer, container, nonArchived, { inline: true }));
}

const hasLabel = (eb: EB, title: string) => eb.exists(eb.selectFrom('label_links')
  .innerJoin('labels', 'labels.id', 'label_links.label_id').select(one)
  .where('label_links.target_type', '=', 'MergeRequest').whereRef('label_links.target_id', '=', 'merge_requests.id')
  .where('labels.title', '=', title));
const anyLabel = (eb: EB) => eb.exists(eb.selectFrom('label_links').select(one)
  .where('label_links.target_type', '=', 'MergeRequest').whereRef('label_links.target_id', '=', 'merge_requests.id'));
const milestoneTitled = (eb: EB, title: string) => eb.exists(eb.selectFrom('milestones').select(one)
  .whereRef('milestones.id', '=', 'merge_requests.milestone_id').where('milestones.title', '=', title));
/** `lowered`: the username already lower-cased (bound as it is). */
const userNamed = (eb: EB, lowered: string) => eb.selectFrom('users').select('users.id')
  .where(sql`lower(users.username)`, '=', lowered).$asScalar();
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

function byPeople(shape: MergeRequestsShape, table: PeopleTable, s?: Special<number>, username?: string) {
  if (s && 'none' in s) shape.step(`${table}:none`, (qb) => qb.where((eb) => eb.not(person(eb, table))));
  else if (s && 'any' in s) shape.step(`${table}:any`, (qb) => qb.where((eb) => person(eb, table)));
  else if (s) {
    const id = shape.arg(s.value);
    shape.step(`${table}:id`, (qb) => qb.where((eb) => person(eb, table, id)));
  }
  if (username !== undefined) {
    const lowered = shape.arg(username.toLowerCase());
    shape.step(`${table}:username`, (qb) => qb.where((eb) => person(eb, table, userNamed(eb, lowered))));
  }
}

/** Adds the request's filters to the shape (MergeRequestsFinder's), every value bound. */
export function filterMergeRequestsShape(shape: MergeRequestsShape, f: MergeRequestFilters, viewer: UserRow | null): MergeRequestsShape {
  const step = (token: string, apply: (qb: MergeRequestsFrom) => MergeRequestsFrom) => shape.step(token, apply);
  const arg = <T>(v: T) => shape.arg(v);
  if (f.scope && f.scope !== 'all') {
    if (!viewer) {
      step('never', (qb) => qb.where(never));
      return shape;
    }
    const id = arg(viewer.id);
    if (f.scope === 'created_by_me') step('created_by_me', (qb) => qb.where('merge_requests.author_id', '=', id));
    else step('assigned_to_me', (qb) => qb.where((eb) => person(eb, 'merge_request_assignees', id)));
  }
  if (f.state && f.state !== 'all') {
    const state = arg(f.state);
    step('state', (qb) => qb.where('merge_requests.state', '=', state));
  }
  const l = f.labels;
  if (l && 'none' in l) step('labels:none', (qb) => qb.where((eb) => eb.not(anyLabel(eb))));
  else if (l && 'any' in l) step('labels:any', (qb) => qb.where((eb) => anyLabel(eb)));
  else if (l) {
    for (const title of args(shape, l.value)) step('label', (qb) => qb.where((eb) => hasLabel(eb, title)));
  }
  for (const title of args(shape, f.not?.labels ?? [])) step('not label', (qb) => qb.where((eb) => eb.not(hasLabel(eb, title))));
  const m = f.milestone;
  if (m && 'none' in m) step('milestone:none', (qb) => qb.where('merge_requests.milestone_id', 'is', null));
  else if (m && 'any' in m) step('milestone:any', (qb) => qb.where('merge_requests.milestone_id', 'is not', null));
  else if (m) {
    const title = arg(m.value);
    step('milestone', (qb) => qb.where((eb) => milestoneTitled(eb, title)));
  }
  if (f.not?.milestone !== undefined) {
    const t = arg(f.not.milestone);
    step('not milestone', (qb) => qb.where((eb) => eb.or([eb('merge_requests.milestone_id', 'is', null), eb.not(milestoneTitled(eb, t))])));
  }
  if (f.authorId !== undefined) {
    const id = arg(f.authorId);
    step('author_id', (qb) => qb.where('merge_requests.author_id', '=', id));
  }
  if (f.authorUsername !== undefined) {
    const lowered = arg(f.authorUsername.toLowerCase());
    step('author_username', (qb) => qb.where('merge_requests.author_id', 'in', (eb) => userNamed(eb as EB, lowered)));
  }
  if (f.not?.authorId !== undefined) {
    const id = arg(f.not.authorId);
    step('not author_id', (qb) => qb.where('merge_requests.author_id', '<>', id));
  }
  if (f.not?.authorUsername !== undefined) {
    const lowered = arg(f.not.authorUsername.toLowerCase());
    step('not author_username', (qb) => qb.where('merge_requests.author_id', 'not in', (eb) => userNamed(eb as EB, lowered)));
  }
  byPeople(shape, 'merge_request_assignees', f.assignee, f.assigneeUsername);
  byPeople(shape, 'merge_request_reviewers', f.reviewer, f.reviewerUsername);
  for (const [table, id, username] of [
    ['merge_request_assignees', f.not?.assigneeId, f.not?.assigneeUsername],
    ['merge_request_reviewers', f.not?.reviewerId, f.not?.reviewerUsername],
  ] as const) {
    if (id !== undefined) {
      const bound = arg(id);
      step(`not ${table}:id`, (qb) => qb.where((eb) => eb.not(person(eb, table, bound))));
    }
    if (username !== undefined) {
      const lowered = arg(username.toLowerCase());
      step(`not ${table}:username`, (qb) => qb.where((eb) => eb.not(person(eb, table, userNamed(eb, lowered)))));
    }
  }
  if (viewer) {
    const r = f.myReactionEmoji;
    if (r) {
      const id = arg(viewer.id);
      if ('none' in r) step('reaction:none', (qb) => qb.where((eb) => eb.not(reacted(eb, id, null))));
      else if ('any' in r) step('reaction:any', (qb) => qb.where((eb) => reacted(eb, id, null)));
      else {
        const name = arg(r.value);
        step('reaction', (qb) => qb.where((eb) => reacted(eb, id, name)));
      }
    }
    if (f.not?.myReactionEmoji !== undefined) {
      const id = arg(viewer.id);
      const name = arg(f.not.myReactionEmoji);
      step('not reaction', (qb) => qb.where((eb) => eb.not(reacted(eb, id, name))));
    }
  }
  if (f.iids && f.iids.length > 0) {
    const iids = args(shape, f.iids);
    step(`iids${iids.length}`, (qb) => qb.where('merge_requests.iid', 'in', iids));
  }
  const compare = (token: string, column: 'source_branch' | 'target_branch' | 'created_at' | 'updated_at', op: '=' | '<>' | '>=' | '<=',
    value: string | undefined) => {
    if (value === undefined) return;
    const bound = arg(value);
    step(token, (qb) => qb.where(`merge_requests.${column}`, op, bound));
  };
  if (f.sourceBranch !== undefined) compare('source_branch', 'source_branch', '=', f.sourceBranch);
  if (f.targetBranch !== undefined) compare('target_branch', 'target_branch', '=', f.targetBranch);
  if (f.not?.sourceBranch !== undefined) compare('not source_branch', 'source_branch', '<>', f.not.sourceBranch);
  if (f.not?.targetBranch !== undefined) compare('not target_branch', 'target_branch', '<>', f.not.targetBranch);
  if (f.wip !== undefined) {
    const draft = arg(f.wip ? 1 : 0);
    step('wip', (qb) => qb.where('merge_requests.draft', '=', draft));
  }
  if (f.search) {
    const pattern = arg(containsPattern(f.search));
    const fields = f.searchIn && f.searchIn.length > 0 ? f.searchIn : ['title', 'description'];
    step(`search:${fields.join(',')}`, (qb) => qb.where((eb) => eb.or(fields.map((field) => eb(
      sql`lower(coalesce(${sql.ref(`merge_requests.${field}`)}, ''))`, 'like', sql`${pattern} escape '\\'`,
    )))));
  }
  if (f.createdAfter) compare('created_after', 'created_at', '>=', f.createdAfter);
  if (f.createdBefore) compare('created_before', 'created_at', '<=', f.createdBefore);
  if (f.updatedAfter) compare('updated_after', 'updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) compare('updated_before', 'updated_at', '<=', f.updatedBefore);
  return shape;
}

/** The request's filters on a query built with Kysely (search, milestones' lists). */
export function filterMergeRequests(qb: MergeRequestsQuery, f: MergeRequestFilters, viewer: UserRow | null): MergeRequestsQuery {
  const shape = filterMergeRequestsShape(new QueryShape({ inline: true }), f, viewer);
  return shape.apply(qb as unknown as MergeRequestsFrom) as unknown as MergeRequestsQuery;
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

/** The list orders of the API's lists on a shape (the same SQL as orderMergeRequests'). */
export function orderMergeRequestsShape(shape: MergeRequestsShape, order: MergeRequestOrder, dir: 'asc' | 'desc'): MergeRequestsShape {
  shape.order(`${order} ${dir}`, (qb) => qb.orderBy(`merge_requests.${order}`, dir).orderBy('merge_requests.id', dir));
  return shape;
}

/** Opened, closed, merged and locked requests of a query (for milestones' and labels' counts). */
export async function countMergeRequestsByState(db: Kysely<DB>, qb: MergeRequestsQuery): Promise<Map<string, number>> {
  const inner = qb.clearSelect().clearOrderBy().select('merge_requests.state').as('found');
  const rows = await db.selectFrom(inner).select(['found.state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('found.state').execute();
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
