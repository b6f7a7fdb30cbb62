/**
 * The read side of the issue lists (the Service's IssuesFinder and IssuableFinder 15.2): a
 * pipeline of small filters over one query of `issues`. What the viewer may see comes first —
 * the projects whose issues they may read (issues feature enabled for readers by visibility,
 * at least private for members; archived projects left out unless asked) and, among their issues,
 * the confidential ones only where they are Reporter or up, or author or assignee — so lists,
 * their counts (X-Total) and statistics agree. Then the request's filters; the caller orders and
 * paginates.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { QueryShape } from '../../db/query-shape.ts';
import type { DB, UserRow } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { ACCESS_LEVELS, VISIBILITY_LEVELS } from '../permissions/access.ts';
import { authorizedGroupLevels } from '../members/members.queries.ts';
import { containsPattern } from '../projects/project.finder.ts';
import { addDays, todayDate } from '../clock.ts';

export type IssuesQuery = SelectQueryBuilder<DB, 'issues', IssueRow>;
type EB = ExpressionBuilder<DB, 'issues'>;

/** Where the list looks: one project the viewer may read (checked by the caller), a group's projects, or the instance. */
export type IssueContainer =
  | { project: { id: number; canRead: boolean; canReadConfidential: boolean } }
  | { namespaceIds: number[] }
  | { instance: true };

/** `None` / `Any` or a value, as IssuableFinder reads them (case-insensitive). */
export type Special<T> = { none: true } | { any: true } | { value: T };

export const DUE_DATE_FILTERS = ['0', 'any', 'today', 'tomorrow', 'overdue', 'week', 'month', 'next_month_and_previous_two_weeks'] as const;
export type DueDateFilter = (typeof DUE_DATE_FILTERS)[number];

export interface NegatedFilters {
  labels?: string[];
  milestone?: string;
  authorId?: number;
  authorUsername?: string;
  assigneeId?: number;
  assigneeUsername?: string[];
  myReactionEmoji?: string;
  iids?: number[];
}

export interface IssueFilters {
  scope?: 'created_by_me' | 'assigned_to_me' | 'all';
  state?: 'opened' | 'closed' | 'all';
  labels?: Special<string[]>;
  milestone?: Special<string> | { upcoming: true } | { started: true };
  authorId?: number;
  authorUsername?: string;
  assignee?: Special<number>;
  assigneeUsernames?: string[];
  myReactionEmoji?: Special<string>;
  iids?: number[];
  search?: string;
  searchIn?: ('title' | 'description')[];
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  confidential?: boolean;
  issueTypes?: string[];
  dueDate?: DueDateFilter;
  nonArchived?: boolean;
  not?: NegatedFilters;
}

const never = sql<SqlBool>`1 = 0`;

/** The issues table before anything is selected: where the filters start. */
export type IssuesFrom = SelectQueryBuilder<DB, 'issues', object>;
/** An issue list's filters and order, compiled once per shape (db/query-shape.ts). */
export type IssuesShape = QueryShape<IssuesFrom>;

/** Binds each value at its own position: a list's length is part of the shape, its values are not. */
const args = <T>(shape: IssuesShape, values: readonly T[]): T[] => values.map((v) => shape.arg(v));

/** Projects the viewer may read issues of, as a condition on `projects`: the visibility half and the membership half. */
async function readableProjects(
  db: Kysely<DB>, shape: IssuesShape, viewer: UserRow | null, container: IssueContainer, nonArchived: boolean,
) {
  const groupLevels = viewer && !viewer.admin ? await authorizedGroupLevels(db, viewer.id) : new Map<number, number>();
  const direct = viewer && !viewer.admin
    ? await db.selectFrom('members').select(['source_id', 'access_level']).where('user_id', '=', viewer.id)
      .where('source_type', '=', 'Project').execute()
    : [];
  const reporterProjects = direct.filter((m) => m.access_level >= ACCESS_LEVELS.reporter).map((m) => m.source_id);
  const reporterGroups = [...groupLevels].filter(([, l]) => l >= ACCESS_LEVELS.reporter).map(([id]) => id);
  const namespaceIds = 'namespaceIds' in container ? args(shape, container.namespaceIds) : null;
  const tokens = [namespaceIds ? `ns${namespaceIds.length}` : 'all', nonArchived ? 'unarchived' : 'archived too'];
  let where: (eb: ExpressionBuilder<DB, 'projects'>) => Expression<SqlBool>;
  // A disabled issues feature withholds them from administrators too (ProjectPolicy issues_disabled).
  if (viewer?.admin) {
    tokens.push('admin');
    where = (eb) => eb('projects.issues_access_level', '>', 0);
  } else {
    const minVisible = shape.arg(!viewer || viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal);
    const memberProjects = args(shape, direct.map((m) => m.source_id));
    const memberGroups = args(shape, [...groupLevels.keys()]);
    tokens.push(`members${memberProjects.length}/${memberGroups.length}`);
    where = (eb) => eb.or([
      eb.and([eb('projects.visibility_level', '>=', minVisible), eb('projects.issues_access_level', '>=', 20)]),
      ...(memberProjects.length > 0 || memberGroups.length > 0 ? [eb.and([
        eb('projects.issues_access_level', '>=', 10),
        eb.or([
          ...(memberProjects.length > 0 ? [eb('projects.id', 'in', memberProjects)] : []),
          ...(memberGroups.length > 0 ? [eb('projects.namespace_id', 'in', memberGroups)] : []),
        ]),
      ])] : []),
    ]);
  }
  shape.step(`projects:${tokens.join(',')}`, (qb) => qb.where('issues.project_id', 'in', (eb) => {
    let q = eb.selectFrom('projects').select('projects.id').where('projects.pending_delete', '=', 0);
    if (namespaceIds) q = q.where('projects.namespace_id', 'in', namespaceIds);
    if (nonArchived) q = q.where('projects.archived', '=', 0);
    return q.where(where);
  }));
  return { reporterProjects, reporterGroups };
}

/** Confidential issues only where the viewer may read them (IssuesFinder#with_confidentiality_access_check). */
function involvement(eb: EB, viewerId: number | null): Expression<SqlBool>[] {
  if (viewerId === null) return [];
  return [
    eb('issues.author_id', '=', viewerId),
    eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
      .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', viewerId)),
  ];
}

/**
 * The issues the viewer may see in the container, before the request's filters. `inline`: for a
 * query built once with Kysely (issuesQuery) rather than a ShapedList's remembered statement.
 */
export async function issuesShape(
  db: Kysely<DB>, viewer: UserRow | null, container: IssueContainer, nonArchived: boolean, opts: { inline?: boolean } = {},
): Promise<IssuesShape> {
  const shape: IssuesShape = new QueryShape(opts);
  const viewerId = viewer ? shape.arg(viewer.id) : null;
  if ('project' in container) {
    const projectId = shape.arg(container.project.id);
    shape.step('project', (qb) => qb.where('issues.project_id', '=', projectId));
    // A project whose issues the viewer may not read lists none (Project.with_issues_available_for_user).
    if (!container.project.canRead) shape.step('never', (qb) => qb.where(never));
    else if (!container.project.canReadConfidential) {
      shape.step(`confidential:${viewerId === null ? 'anonymous' : 'involved'}`, (qb) => qb.where((eb) => eb.or([
        eb('issues.confidential', '=', 0), ...involvement(eb, viewerId),
      ])));
    }
    return shape;
  }
  // Administrators across the instance with archived projects included: no project condition (the
  // one list that walks issues alone, in their order; issues of a project with the feature
  // disabled stay listed there).
  if (viewer?.admin && 'instance' in container && !nonArchived) return shape;
  const r = await readableProjects(db, shape, viewer, container, nonArchived);
  if (viewer?.admin) return shape;
  const reporterProjects = args(shape, r.reporterProjects);
  const reporterGroups = args(shape, r.reporterGroups);
  shape.step(`confidential:${viewerId === null ? 'anonymous' : 'involved'}:${reporterProjects.length}/${reporterGroups.length}`,
    (qb) => qb.where((eb) => eb.or([
      eb('issues.confidential', '=', 0),
      ...involvement(eb, viewerId),
      ...(reporterProjects.length > 0 ? [eb('issues.project_id', 'in', reporterProjects)] : []),
      ...(reporterGroups.length > 0 ? [eb('issues.project_id', 'in', eb.selectFrom('projects').select('projects.id')
        .where('projects.namespace_id', 'in', reporterGroups))] : []),
    ])));
  return shape;
}

/** The query a shape stands for, built at once with its values (an inline shape), every column of `issues` selected. */
export function issuesQuery(db: Kysely<DB>, shape: IssuesShape): IssuesQuery {
  return shape.apply(db.selectFrom('issues')).selectAll('issues');
}

/** The issues the viewer may see in the container, as a query (search, statistics). */
export async function visibleIssues(
  db: Kysely<DB>, viewer: UserRow | null, container: IssueContainer, nonArchived: boolean,
): Promise<IssuesQuery> {
  return issuesQuery(db, await issuesShape(db, viewer, container, nonArchived, { inline: true }));
}

/**
 * The ids of the labels so titled are read once for the query (labels_title), not joined for
 * every issue the list walks: on 100,000 issues a third labelled, half the page's SQLite time.
 */
const hasLabel = (eb: EB, title: string) => eb.exists(eb.selectFrom('label_links').select(sql.lit(1).as('one'))
  .where('label_links.target_type', '=', 'Issue').whereRef('label_links.target_id', '=', 'issues.id')
  .where('label_links.label_id', 'in', eb.selectFrom('labels').select('labels.id').where('labels.title', '=', title)));
const anyLabel = (eb: EB) => eb.exists(eb.selectFrom('label_links').select(sql.lit(1).as('one'))
  .where('label_links.target_type', '=', 'Issue').whereRef('label_links.target_id', '=', 'issues.id'));
const milestoneWhere = (eb: EB, cond: (m: ExpressionBuilder<DB, 'milestones'>) => Expression<SqlBool>) => eb.exists(
  eb.selectFrom('milestones').select(sql.lit(1).as('one')).whereRef('milestones.id', '=', 'issues.milestone_id').where(cond),
);
const userNamed = (eb: EB, username: string) => eb.selectFrom('users').select('users.id').where(sql`lower(users.username)`, '=', username);
const assignedTo = (eb: EB, user: number) => eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
  .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', user));
const anyAssignee = (eb: EB) => eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
  .whereRef('issue_assignees.issue_id', '=', 'issues.id'));
const assignedToNamed = (eb: EB, username: string) => eb.exists(eb.selectFrom('issue_assignees')
  .innerJoin('users', 'users.id', 'issue_assignees.user_id').select(sql.lit(1).as('one'))
  .whereRef('issue_assignees.issue_id', '=', 'issues.id').where(sql`lower(users.username)`, '=', username));
const reacted = (eb: EB, viewerId: number, name: string | null) => {
  let q = eb.selectFrom('award_emoji').select(sql.lit(1).as('one')).where('award_emoji.awardable_type', '=', 'Issue')
    .whereRef('award_emoji.awardable_id', '=', 'issues.id').where('award_emoji.user_id', '=', viewerId);
  if (name !== null) q = q.where('award_emoji.name', '=', name);
  return eb.exists(q);
};

/**
 * Milestones due soonest of their owner among the active ones not yet due (Milestone.upcoming_ids),
 * and those started (active, start date today or before).
 */
function upcomingMilestone(eb: EB, today: string): Expression<SqlBool> {
  return milestoneWhere(eb, (m) => m.and([
    m('milestones.state', '=', 'active'), m('milestones.due_date', '>', today),
    m.not(m.exists(m.selectFrom('milestones as sooner').select(sql.lit(1).as('one')).where((s) => s.and([
      s('sooner.state', '=', 'active'), s('sooner.due_date', '>', today), s('sooner.due_date', '<', s.ref('milestones.due_date')),
      s.or([
        s.and([s('milestones.project_id', 'is not', null), s('sooner.project_id', '=', s.ref('milestones.project_id'))]),
        s.and([s('milestones.group_id', 'is not', null), s('sooner.group_id', '=', s.ref('milestones.group_id'))]),
      ]),
    ])))),
  ]));
}

const startedMilestone = (eb: EB, today: string) => milestoneWhere(eb, (ms) => ms.and([
  ms('milestones.state', '=', 'active'), ms('milestones.start_date', '<=', today),
]));

type Filter = (shape: IssuesShape, f: IssueFilters, viewer: UserRow | null) => void;

const byScope: Filter = (shape, f, viewer) => {
  if (!f.scope || f.scope === 'all') return;
  if (!viewer) {
    shape.step('never', (qb) => qb.where(never));
    return;
  }
  const id = shape.arg(viewer.id);
  if (f.scope === 'created_by_me') shape.step('created_by_me', (qb) => qb.where('issues.author_id', '=', id));
  else shape.step('assigned_to_me', (qb) => qb.where((eb) => assignedTo(eb, id)));
};

const byState: Filter = (shape, f) => {
  if (!f.state || f.state === 'all') return;
  const state = shape.arg(f.state);
  shape.step('state', (qb) => qb.where('issues.state', '=', state));
};

const byLabels: Filter = (shape, f) => {
  const l = f.labels;
  if (l && 'none' in l) shape.step('labels:none', (qb) => qb.where((eb) => eb.not(anyLabel(eb))));
  else if (l && 'any' in l) shape.step('labels:any', (qb) => qb.where((eb) => anyLabel(eb)));
  else if (l) {
    for (const title of args(shape, l.value)) shape.step('label', (qb) => qb.where((eb) => hasLabel(eb, title)));
  }
  for (const title of args(shape, f.not?.labels ?? [])) shape.step('not:label', (qb) => qb.where((eb) => eb.not(hasLabel(eb, title))));
};

const byMilestone: Filter = (shape, f) => {
  const m = f.milestone;
  const not = f.not?.milestone;
  if (m === undefined && not === undefined) return;
  const today = shape.arg(todayDate());
  if (m && 'none' in m) shape.step('milestone:none', (qb) => qb.where('issues.milestone_id', 'is', null));
  else if (m && 'any' in m) shape.step('milestone:any', (qb) => qb.where('issues.milestone_id', 'is not', null));
  else if (m && 'upcoming' in m) shape.step('milestone:upcoming', (qb) => qb.where((eb) => upcomingMilestone(eb, today)));
  else if (m && 'started' in m) shape.step('milestone:started', (qb) => qb.where((eb) => startedMilestone(eb, today)));
  else if (m) {
    const title = shape.arg(m.value);
    shape.step('milestone', (qb) => qb.where((eb) => milestoneWhere(eb, (ms) => ms('milestones.title', '=', title))));
  }
  if (not === undefined) return;
  const lower = not.toLowerCase();
  const without = (token: string, cond: (eb: EB) => Expression<SqlBool>) => shape.step(`not:milestone:${token}`,
    (qb) => qb.where((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb.not(cond(eb))])));
  if (lower === 'upcoming') without('upcoming', (eb) => upcomingMilestone(eb, today));
  else if (lower === 'started') without('started', (eb) => startedMilestone(eb, today));
  else {
    const title = shape.arg(not);
    without('title', (eb) => milestoneWhere(eb, (ms) => ms('milestones.title', '=', title)));
  }
};

const byAuthor: Filter = (shape, f) => {
  const equal = (token: string, value: number | undefined, op: '=' | '<>') => {
    if (value === undefined) return;
    const id = shape.arg(value);
    shape.step(token, (qb) => qb.where('issues.author_id', op, id));
  };
  const named = (token: string, value: string | undefined, op: 'in' | 'not in') => {
    if (value === undefined) return;
    const username = shape.arg(value.toLowerCase());
    shape.step(token, (qb) => qb.where('issues.author_id', op, (eb) => userNamed(eb as EB, username)));
  };
  equal('author', f.authorId, '=');
  named('author:username', f.authorUsername, 'in');
  equal('not:author', f.not?.authorId, '<>');
  named('not:author:username', f.not?.authorUsername, 'not in');
};

const byAssignee: Filter = (shape, f) => {
  const a = f.assignee;
  if (a && 'none' in a) shape.step('assignee:none', (qb) => qb.where((eb) => eb.not(anyAssignee(eb))));
  else if (a && 'any' in a) shape.step('assignee:any', (qb) => qb.where((eb) => anyAssignee(eb)));
  else if (a) {
    const id = shape.arg(a.value);
    shape.step('assignee', (qb) => qb.where((eb) => assignedTo(eb, id)));
  }
  for (const name of args(shape, (f.assigneeUsernames ?? []).map((n) => n.toLowerCase()))) {
    shape.step('assignee:username', (qb) => qb.where((eb) => assignedToNamed(eb, name)));
  }
  if (f.not?.assigneeId !== undefined) {
    const id = shape.arg(f.not.assigneeId);
    shape.step('not:assignee', (qb) => qb.where((eb) => eb.not(assignedTo(eb, id))));
  }
  for (const name of args(shape, (f.not?.assigneeUsername ?? []).map((n) => n.toLowerCase()))) {
    shape.step('not:assignee:username', (qb) => qb.where((eb) => eb.not(assignedToNamed(eb, name))));
  }
};

/** my_reaction_emoji: signed-in viewers only, as IssuableFinder#by_my_reaction_emoji. */
const byReaction: Filter = (shape, f, viewer) => {
  const r = f.myReactionEmoji;
  const not = f.not?.myReactionEmoji;
  if (!viewer || (r === undefined && not === undefined)) return;
  const id = shape.arg(viewer.id);
  if (r && 'none' in r) shape.step('reaction:none', (qb) => qb.where((eb) => eb.not(reacted(eb, id, null))));
  else if (r && 'any' in r) shape.step('reaction:any', (qb) => qb.where((eb) => reacted(eb, id, null)));
  else if (r) {
    const name = shape.arg(r.value);
    shape.step('reaction', (qb) => qb.where((eb) => reacted(eb, id, name)));
  }
  if (not !== undefined) {
    const name = shape.arg(not);
    shape.step('not:reaction', (qb) => qb.where((eb) => eb.not(reacted(eb, id, name))));
  }
};

const byIids: Filter = (shape, f) => {
  if (f.iids && f.iids.length > 0) {
    const iids = args(shape, f.iids);
    shape.step(`iids${iids.length}`, (qb) => qb.where('issues.iid', 'in', iids));
  }
  if (f.not?.iids && f.not.iids.length > 0) {
    const iids = args(shape, f.not.iids);
    shape.step(`not:iids${iids.length}`, (qb) => qb.where('issues.iid', 'not in', iids));
  }
};

const bySearch: Filter = (shape, f) => {
  if (!f.search) return;
  const pattern = shape.arg(containsPattern(f.search));
  const fields = f.searchIn && f.searchIn.length > 0 ? f.searchIn : ['title', 'description'];
  shape.step(`search:${fields.join(',')}`, (qb) => qb.where((eb) => eb.or(fields.map((field) => eb(
    sql`lower(coalesce(${sql.ref(`issues.${field}`)}, ''))`, 'like', sql`${pattern} escape '\\'`,
  )))));
};

const byTimes: Filter = (shape, f) => {
  const bound = (token: string, column: 'created_at' | 'updated_at', op: '>=' | '<=', value: string | undefined) => {
    if (!value) return;
    const v = shape.arg(value);
    shape.step(token, (qb) => qb.where(`issues.${column}`, op, v));
  };
  bound('created_after', 'created_at', '>=', f.createdAfter);
  bound('created_before', 'created_at', '<=', f.createdBefore);
  bound('updated_after', 'updated_at', '>=', f.updatedAfter);
  bound('updated_before', 'updated_at', '<=', f.updatedBefore);
};

const byAttributes: Filter = (shape, f) => {
  if (f.confidential !== undefined) {
    const confidential = shape.arg(f.confidential ? 1 : 0);
    shape.step('confidential', (qb) => qb.where('issues.confidential', '=', confidential));
  }
  if (f.issueTypes && f.issueTypes.length > 0) {
    const types = args(shape, f.issueTypes);
    shape.step(`types${types.length}`, (qb) => qb.where('issues.issue_type', 'in', types));
  }
};

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The due date windows of Issue's scopes (no_due_date, due_today, overdue, due_this_week …). */
const byDueDate: Filter = (shape, f) => {
  if (!f.dueDate) return;
  const now = new Date(`${todayDate()}T00:00:00Z`);
  const between = (from: Date, to: Date) => {
    const first = shape.arg(day(from));
    const last = shape.arg(day(to));
    shape.step('due:between', (qb) => qb.where('issues.due_date', '>=', first).where('issues.due_date', '<=', last));
  };
  const monthEnd = (d: Date, months: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months + 1, 0));
  switch (f.dueDate) {
    case '0': return shape.step('due:none', (qb) => qb.where('issues.due_date', 'is', null));
    case 'any': return shape.step('due:any', (qb) => qb.where('issues.due_date', 'is not', null));
    case 'today': return between(now, now);
    case 'tomorrow': return between(addDays(now, 1), addDays(now, 1));
    case 'overdue': {
      const today = shape.arg(day(now));
      return shape.step('due:overdue', (qb) => qb.where('issues.due_date', '<', today));
    }
    case 'week': {
      // Monday to Sunday, as Date#beginning_of_week.
      const monday = addDays(now, -((now.getUTCDay() + 6) % 7));
      return between(monday, addDays(monday, 6));
    }
    case 'month': return between(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), monthEnd(now, 0));
    case 'next_month_and_previous_two_weeks': return between(addDays(now, -14), monthEnd(now, 1));
  }
};

const FILTERS: Filter[] = [
  byScope, byState, byLabels, byMilestone, byAuthor, byAssignee, byReaction, byIids, bySearch, byTimes, byAttributes, byDueDate,
];

/** The request's filters, one small step each, added to the shape (which is returned). */
export function filterIssues(shape: IssuesShape, f: IssueFilters, viewer: UserRow | null): IssuesShape {
  for (const filter of FILTERS) filter(shape, f, viewer);
  return shape;
}

/** Only the issues of one milestone (by id: a project's and a group's milestone may share a title). */
export function inMilestone(shape: IssuesShape, milestoneId: number): IssuesShape {
  const id = shape.arg(milestoneId);
  shape.step('milestone_id', (qb) => qb.where('issues.milestone_id', '=', id));
  return shape;
}

/** Opened and closed issues among those the query finds (Gitlab::IssuablesCountForState). */
export async function countIssuesByState(db: Kysely<DB>, qb: IssuesQuery): Promise<{ opened: number; closed: number }> {
  const inner = qb.clearSelect().clearOrderBy().select('issues.state').as('found');
  const rows = await db.selectFrom(inner).select(['found.state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('found.state').execute();
  const of = (s: string) => Number(rows.find((r) => r.state === s)?.n ?? 0);
  return { opened: of('opened'), closed: of('closed') };
}
