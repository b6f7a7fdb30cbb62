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

/** Projects the viewer may read issues of, as a condition on `projects`: the visibility half and the membership half. */
async function readableProjects(db: Kysely<DB>, viewer: UserRow | null, container: IssueContainer, nonArchived: boolean) {
  const groupLevels = viewer && !viewer.admin ? await authorizedGroupLevels(db, viewer.id) : new Map<number, number>();
  const direct = viewer && !viewer.admin
    ? await db.selectFrom('members').select(['source_id', 'access_level']).where('user_id', '=', viewer.id)
      .where('source_type', '=', 'Project').execute()
    : [];
  const reporterProjects = direct.filter((m) => m.access_level >= ACCESS_LEVELS.reporter).map((m) => m.source_id);
  const reporterGroups = [...groupLevels].filter(([, l]) => l >= ACCESS_LEVELS.reporter).map(([id]) => id);
  let q = db.selectFrom('projects').select('projects.id').where('projects.pending_delete', '=', 0);
  if ('namespaceIds' in container) q = q.where('projects.namespace_id', 'in', container.namespaceIds);
  if (nonArchived) q = q.where('projects.archived', '=', 0);
  // A disabled issues feature withholds them from administrators too (ProjectPolicy issues_disabled).
  if (viewer?.admin) q = q.where('projects.issues_access_level', '>', 0);
  else {
    const minVisible = !viewer ? VISIBILITY_LEVELS.public : viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal;
    const memberProjects = direct.map((m) => m.source_id);
    const memberGroups = [...groupLevels.keys()];
    q = q.where((eb) => eb.or([
      eb.and([eb('projects.visibility_level', '>=', minVisible), eb('projects.issues_access_level', '>=', 20)]),
      ...(memberProjects.length > 0 || memberGroups.length > 0 ? [eb.and([
        eb('projects.issues_access_level', '>=', 10),
        eb.or([
          ...(memberProjects.length > 0 ? [eb('projects.id', 'in', memberProjects)] : []),
          ...(memberGroups.length > 0 ? [eb('projects.namespace_id', 'in', memberGroups)] : []),
        ]),
      ])] : []),
    ]));
  }
  return { projects: q, reporterProjects, reporterGroups };
}

/** Confidential issues only where the viewer may read them (IssuesFinder#with_confidentiality_access_check). */
function involvement(eb: EB, viewer: UserRow | null): Expression<SqlBool>[] {
  if (!viewer) return [];
  return [
    eb('issues.author_id', '=', viewer.id),
    eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
      .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', viewer.id)),
  ];
}

/** The issues the viewer may see in the container, before the request's filters. */
export async function visibleIssues(
  db: Kysely<DB>, viewer: UserRow | null, container: IssueContainer, nonArchived: boolean,
): Promise<IssuesQuery> {
  let qb: IssuesQuery = db.selectFrom('issues').selectAll('issues');
  if ('project' in container) {
    qb = qb.where('issues.project_id', '=', container.project.id);
    // A project whose issues the viewer may not read lists none (Project.with_issues_available_for_user).
    if (!container.project.canRead) return qb.where(never);
    if (!container.project.canReadConfidential) {
      qb = qb.where((eb) => eb.or([eb('issues.confidential', '=', 0), ...involvement(eb, viewer)]));
    }
    return qb;
  }
  // Administrators across the instance with archived projects included: no project condition (the
  // one list that walks issues alone, in their order; issues of a project with the feature
  // disabled stay listed there).
  if (viewer?.admin && 'instance' in container && !nonArchived) return qb;
  const r = await readableProjects(db, viewer, container, nonArchived);
  qb = qb.where('issues.project_id', 'in', r.projects);
  if (viewer?.admin) return qb;
  return qb.where((eb) => eb.or([
    eb('issues.confidential', '=', 0),
    ...involvement(eb, viewer),
    ...(r.reporterProjects.length > 0 ? [eb('issues.project_id', 'in', r.reporterProjects)] : []),
    ...(r.reporterGroups.length > 0 ? [eb('issues.project_id', 'in', eb.selectFrom('projects').select('projects.id')
      .where('projects.namespace_id', 'in', r.reporterGroups))] : []),
  ]));
}

const hasLabel = (eb: EB, title: string) => eb.exists(eb.selectFrom('label_links')
  .innerJoin('labels', 'labels.id', 'label_links.label_id').select(sql.lit(1).as('one'))
  .where('label_links.target_type', '=', 'Issue').whereRef('label_links.target_id', '=', 'issues.id').where('labels.title', '=', title));
const anyLabel = (eb: EB) => eb.exists(eb.selectFrom('label_links').select(sql.lit(1).as('one'))
  .where('label_links.target_type', '=', 'Issue').whereRef('label_links.target_id', '=', 'issues.id'));
const milestoneWhere = (eb: EB, cond: (m: ExpressionBuilder<DB, 'milestones'>) => Expression<SqlBool>) => eb.exists(
  eb.selectFrom('milestones').select(sql.lit(1).as('one')).whereRef('milestones.id', '=', 'issues.milestone_id').where(cond),
);
const userNamed = (eb: EB, username: string) => eb.selectFrom('users').select('users.id').where(sql`lower(users.username)`, '=', username.toLowerCase());
const assignedTo = (eb: EB, user: Expression<number> | number) => eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
  .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', user));
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

function byScope(qb: IssuesQuery, f: IssueFilters, viewer: UserRow | null): IssuesQuery {
  if (!f.scope || f.scope === 'all') return qb;
  if (!viewer) return qb.where(never);
  return f.scope === 'created_by_me' ? qb.where('issues.author_id', '=', viewer.id) : qb.where((eb) => assignedTo(eb, viewer.id));
}

function byState(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  return f.state && f.state !== 'all' ? qb.where('issues.state', '=', f.state) : qb;
}

function byLabels(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  const l = f.labels;
  if (l && 'none' in l) qb = qb.where((eb) => eb.not(anyLabel(eb)));
  else if (l && 'any' in l) qb = qb.where((eb) => anyLabel(eb));
  else if (l) for (const title of l.value) qb = qb.where((eb) => hasLabel(eb, title));
  for (const title of f.not?.labels ?? []) qb = qb.where((eb) => eb.not(hasLabel(eb, title)));
  return qb;
}

function byMilestone(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  const m = f.milestone;
  const today = todayDate();
  if (m && 'none' in m) qb = qb.where('issues.milestone_id', 'is', null);
  else if (m && 'any' in m) qb = qb.where('issues.milestone_id', 'is not', null);
  else if (m && 'upcoming' in m) qb = qb.where((eb) => upcomingMilestone(eb, today));
  else if (m && 'started' in m) {
    qb = qb.where((eb) => startedMilestone(eb, today));
  } else if (m) qb = qb.where((eb) => milestoneWhere(eb, (ms) => ms('milestones.title', '=', m.value)));
  const not = f.not?.milestone;
  if (not !== undefined) {
    const lower = not.toLowerCase();
    if (lower === 'upcoming') qb = qb.where((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb.not(upcomingMilestone(eb, today))]));
    else if (lower === 'started') {
      qb = qb.where((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb.not(startedMilestone(eb, today))]));
    } else {
      qb = qb.where((eb) => eb.or([
        eb('issues.milestone_id', 'is', null), eb.not(milestoneWhere(eb, (ms) => ms('milestones.title', '=', not))),
      ]));
    }
  }
  return qb;
}

function byAuthor(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (f.authorId !== undefined) qb = qb.where('issues.author_id', '=', f.authorId);
  if (f.authorUsername !== undefined) qb = qb.where('issues.author_id', 'in', (eb) => userNamed(eb as EB, f.authorUsername!));
  if (f.not?.authorId !== undefined) qb = qb.where('issues.author_id', '<>', f.not.authorId);
  if (f.not?.authorUsername !== undefined) qb = qb.where('issues.author_id', 'not in', (eb) => userNamed(eb as EB, f.not!.authorUsername!));
  return qb;
}

function byAssignee(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  const a = f.assignee;
  if (a && 'none' in a) qb = qb.where((eb) => eb.not(eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
    .whereRef('issue_assignees.issue_id', '=', 'issues.id'))));
  else if (a && 'any' in a) qb = qb.where((eb) => eb.exists(eb.selectFrom('issue_assignees').select(sql.lit(1).as('one'))
    .whereRef('issue_assignees.issue_id', '=', 'issues.id')));
  else if (a) qb = qb.where((eb) => assignedTo(eb, a.value));
  for (const name of f.assigneeUsernames ?? []) {
    qb = qb.where((eb) => eb.exists(eb.selectFrom('issue_assignees').innerJoin('users', 'users.id', 'issue_assignees.user_id')
      .select(sql.lit(1).as('one')).whereRef('issue_assignees.issue_id', '=', 'issues.id')
      .where(sql`lower(users.username)`, '=', name.toLowerCase())));
  }
  if (f.not?.assigneeId !== undefined) qb = qb.where((eb) => eb.not(assignedTo(eb, f.not!.assigneeId!)));
  for (const name of f.not?.assigneeUsername ?? []) {
    qb = qb.where((eb) => eb.not(eb.exists(eb.selectFrom('issue_assignees').innerJoin('users', 'users.id', 'issue_assignees.user_id')
      .select(sql.lit(1).as('one')).whereRef('issue_assignees.issue_id', '=', 'issues.id')
      .where(sql`lower(users.username)`, '=', name.toLowerCase()))));
  }
  return qb;
}

/** my_reaction_emoji: signed-in viewers only, as IssuableFinder#by_my_reaction_emoji. */
function byReaction(qb: IssuesQuery, f: IssueFilters, viewer: UserRow | null): IssuesQuery {
  if (!viewer) return qb;
  const r = f.myReactionEmoji;
  if (r && 'none' in r) qb = qb.where((eb) => eb.not(reacted(eb, viewer.id, null)));
  else if (r && 'any' in r) qb = qb.where((eb) => reacted(eb, viewer.id, null));
  else if (r) qb = qb.where((eb) => reacted(eb, viewer.id, r.value));
  if (f.not?.myReactionEmoji !== undefined) qb = qb.where((eb) => eb.not(reacted(eb, viewer.id, f.not!.myReactionEmoji!)));
  return qb;
}

function byIids(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (f.iids && f.iids.length > 0) qb = qb.where('issues.iid', 'in', f.iids);
  if (f.not?.iids && f.not.iids.length > 0) qb = qb.where('issues.iid', 'not in', f.not.iids);
  return qb;
}

function bySearch(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (!f.search) return qb;
  const pattern = containsPattern(f.search);
  const fields = f.searchIn && f.searchIn.length > 0 ? f.searchIn : ['title', 'description'];
  return qb.where((eb) => eb.or(fields.map((field) => eb(
    sql`lower(coalesce(${sql.ref(`issues.${field}`)}, ''))`, 'like', sql`${pattern} escape '\\'`,
  ))));
}

function byTimes(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (f.createdAfter) qb = qb.where('issues.created_at', '>=', f.createdAfter);
  if (f.createdBefore) qb = qb.where('issues.created_at', '<=', f.createdBefore);
  if (f.updatedAfter) qb = qb.where('issues.updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) qb = qb.where('issues.updated_at', '<=', f.updatedBefore);
  return qb;
}

function byAttributes(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (f.confidential !== undefined) qb = qb.where('issues.confidential', '=', f.confidential ? 1 : 0);
  if (f.issueTypes && f.issueTypes.length > 0) qb = qb.where('issues.issue_type', 'in', f.issueTypes);
  return qb;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The due date windows of Issue's scopes (no_due_date, due_today, overdue, due_this_week …). */
function byDueDate(qb: IssuesQuery, f: IssueFilters): IssuesQuery {
  if (!f.dueDate) return qb;
  const now = new Date(`${todayDate()}T00:00:00Z`);
  const between = (from: Date, to: Date) => qb.where('issues.due_date', '>=', day(from)).where('issues.due_date', '<=', day(to));
  const monthEnd = (d: Date, months: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months + 1, 0));
  switch (f.dueDate) {
    case '0': return qb.where('issues.due_date', 'is', null);
    case 'any': return qb.where('issues.due_date', 'is not', null);
    case 'today': return between(now, now);
    case 'tomorrow': return between(addDays(now, 1), addDays(now, 1));
    case 'overdue': return qb.where('issues.due_date', '<', day(now));
    case 'week': {
      // Monday to Sunday, as Date#beginning_of_week.
      const monday = addDays(now, -((now.getUTCDay() + 6) % 7));
      return between(monday, addDays(monday, 6));
    }
    case 'month': return between(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), monthEnd(now, 0));
    case 'next_month_and_previous_two_weeks': return between(addDays(now, -14), monthEnd(now, 1));
  }
}

/** The request's filters, one small step each. */
export function filterIssues(qb: IssuesQuery, f: IssueFilters, viewer: UserRow | null): IssuesQuery {
  const steps = [
    (q: IssuesQuery) => byScope(q, f, viewer), (q: IssuesQuery) => byState(q, f), (q: IssuesQuery) => byLabels(q, f),
    (q: IssuesQuery) => byMilestone(q, f), (q: IssuesQuery) => byAuthor(q, f), (q: IssuesQuery) => byAssignee(q, f),
    (q: IssuesQuery) => byReaction(q, f, viewer), (q: IssuesQuery) => byIids(q, f), (q: IssuesQuery) => bySearch(q, f),
    (q: IssuesQuery) => byTimes(q, f), (q: IssuesQuery) => byAttributes(q, f), (q: IssuesQuery) => byDueDate(q, f),
  ];
  return steps.reduce((q, step) => step(q), qb);
}

/** Opened and closed issues among those the query finds (Gitlab::IssuablesCountForState). */
export async function countIssuesByState(db: Kysely<DB>, qb: IssuesQuery): Promise<{ opened: number; closed: number }> {
  const inner = qb.clearSelect().clearOrderBy().select('issues.state').as('found');
  const rows = await db.selectFrom(inner).select(['found.state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('found.state').execute();
  const of = (s: string) => Number(rows.find((r) => r.state === s)?.n ?? 0);
  return { opened: of('opened'), closed: of('closed') };
}
