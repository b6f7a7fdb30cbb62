/**
 * The issue entities (lib/api/entities/issue_basic.rb, issue.rb of the Service 15.2): IssueBasic
 * with the counts of Gitlab::IssuableMetadata, and Issue adding task status, `_links`,
 * `references`, severity, `subscribed` (single reads only: the Service leaves it out of lists),
 * `moved_to_id` and `service_desk_reply_to`. `presentIssues` batches what a page needs (labels,
 * assignees, milestones, users, counts, subscriptions) into a fixed number of queries.
 */
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { rememberedUserBasicsByIds } from '../../domain/users/users-batch.queries.ts';
import { namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { findProjectsByIds } from '../../domain/projects/projects-batch.queries.ts';
import {
  issuePageFacts, milestonesByIds, subscribedIssueIds,
} from '../../domain/issues/issues.queries.ts';
import { formatDuration } from '../../domain/issues/time-tracking.ts';
import { taskCompletion } from '../../domain/issues/task-list.ts';
import { pagePeople, UserBasicSchema } from './user.ts';
import { LabelBasicSchema, presentLabelBasic } from './label.ts';
import { MilestoneSchema, presentMilestone } from './milestone.ts';
import { flat } from './serializers.ts';
import { projectsCountingClosingRequests } from '../../domain/merge-requests/closing-issues.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const TimeStatsSchema = Type.Object({
  time_estimate: Type.Integer(),
  total_time_spent: Type.Integer(),
  human_time_estimate: Nullable(Type.String()),
  human_total_time_spent: Nullable(Type.String()),
}, { title: 'IssuableTimeStats' });

export const IssueBasicSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: Nullable(Type.String()),
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  closed_at: Nullable(Type.String()),
  closed_by: Nullable(UserBasicSchema),
  labels: Type.Union([Type.Array(Type.String()), Type.Array(LabelBasicSchema)]),
  milestone: Nullable(MilestoneSchema),
  assignees: Type.Array(UserBasicSchema),
  author: UserBasicSchema,
  type: Type.String(),
  assignee: Nullable(UserBasicSchema),
  user_notes_count: Type.Integer(),
  merge_requests_count: Type.Integer(),
  upvotes: Type.Integer(),
  downvotes: Type.Integer(),
  due_date: Nullable(Type.String()),
  confidential: Type.Boolean(),
  discussion_locked: Nullable(Type.Boolean()),
  issue_type: Type.String(),
  web_url: Type.String(),
  time_stats: TimeStatsSchema,
  task_completion_status: Type.Object({ count: Type.Integer(), completed_count: Type.Integer() }),
  blocking_issues_count: Type.Integer(),
}, { title: 'IssueBasic' });

export const IssueSchema = Type.Object({
  ...IssueBasicSchema.properties,
  has_tasks: Type.Boolean(),
  task_status: Type.Optional(Type.String()),
  _links: Type.Object({
    self: Type.String(), notes: Type.String(), award_emoji: Type.String(), project: Type.String(),
    closed_as_duplicate_of: Nullable(Type.String()),
  }),
  references: Type.Object({ short: Type.String(), relative: Type.String(), full: Type.String() }),
  severity: Type.String(),
  subscribed: Type.Optional(Type.Boolean()),
  moved_to_id: Nullable(Type.Integer()),
  service_desk_reply_to: Nullable(Type.String()),
}, { title: 'Issue' });

export type IssueBasic = Static<typeof IssueBasicSchema>;
export type Issue = Static<typeof IssueSchema>;

/** Where each issue's project lives: its full path and namespace (for web_url and references). */
export interface IssueProjectPath {
  fullPath: string;
  /** The project's own path (the last segment). */
  path: string;
  namespaceId: number;
}

/** What the issues are presented from: a project (references relative to it), a group, or the instance. */
export type ReferenceContext = { project: number } | { group: number } | null;

export interface PresentIssuesOptions {
  externalUrl: string;
  /** Each issue's project, by project id. */
  projects: ReadonlyMap<number, IssueProjectPath>;
  viewerId: number | null;
  from: ReferenceContext;
  withLabelsDetails?: boolean;
  /** Whether to include `subscribed` (single reads; the Service leaves it out of lists). */
  includeSubscribed?: boolean;
}

/** Where a page's milestones live: their projects' and groups' full paths (for web_url). */
export interface MilestonePaths {
  projects: ReadonlyMap<number, IssueProjectPath>;
  groups: ReadonlyMap<number, string>;
}

/** The paths a set of milestones' web_urls need: their groups' (and projects' beyond those already known). */
export async function milestonePathsOf(
  db: Kysely<DB>, milestones: readonly MilestoneRow[], known: ReadonlyMap<number, IssueProjectPath> = new Map(),
): Promise<MilestonePaths> {
  const groupIds = [...new Set(milestones.flatMap((m) => (m.group_id === null ? [] : [m.group_id])))];
  const projectIds = [...new Set(milestones.flatMap((m) => (m.project_id === null || known.has(m.project_id) ? [] : [m.project_id])))];
  const [groupPaths, projectPaths] = await Promise.all([
    groupIds.length > 0 ? namespacePathsById(db, groupIds) : new Map(),
    projectIds.length > 0 ? issueProjectPaths(db, projectIds) : new Map<number, IssueProjectPath>(),
  ]);
  return {
    projects: new Map([...known, ...projectPaths]),
    groups: new Map([...groupPaths].map(([id, p]) => [id, p.fullPath as string])),
  };
}

/** Milestone#web_url's owner part: a project's milestone under its project, a group's under /groups/<full path>. */
export function milestoneOwnerUrl(m: MilestoneRow, externalUrl: string, paths: MilestonePaths): string {
  if (m.project_id !== null) return `${externalUrl}/${paths.projects.get(m.project_id)?.fullPath ?? ''}`;
  return `${externalUrl}/groups/${paths.groups.get(m.group_id!) ?? ''}`;
}

/** `#iid`, relative to where the issue is shown from, and the full `group/project#iid` (Issue#to_reference). */
function references(issue: Pick<IssueRow, 'iid' | 'project_id'>, p: IssueProjectPath, from: ReferenceContext) {
  // Flat strings (serializers.ts flat): a list's answer is written by JSON.stringify.
  const short = flat('#', issue.iid);
  const full = flat(p.fullPath, short);
  let relative = full;
  if (from && 'project' in from && from.project === issue.project_id) relative = short;
  else if (from && 'group' in from && from.group === p.namespaceId) relative = flat(p.path, short);
  return { short, relative, full };
}

/**
 * The columns a list's page reads (true): all but the counters (read afresh beside the page by
 * issuePageFacts) and those the entity never shows; every column is named here, so a new one is a
 * choice. Each column a row carries costs better-sqlite3 about 70 ns to read even when null
 * (issue 29's Measure).
 */
const LIST_READS = {
  id: true, iid: true, project_id: true, author_id: true, title: true, description: true, state: true,
  issue_type: true, milestone_id: true, due_date: true, confidential: true, discussion_locked: true,
  time_estimate: true, relative_position: false, closed_at: true, closed_by_id: true, updated_by_id: false,
  last_edited_at: false, last_edited_by_id: false, moved_to_id: true, duplicated_to_id: false, created_at: true,
  updated_at: true, user_notes_count: false, upvotes_count: false, downvotes_count: false, total_time_spent: false,
} as const satisfies Record<keyof IssueRow, boolean>;
type ListRead = { [K in keyof typeof LIST_READS]: (typeof LIST_READS)[K] extends true ? K : never }[keyof typeof LIST_READS];
export type IssueListRow = Pick<IssueRow, ListRead>;
export const ISSUE_LIST_COLUMNS = (Object.keys(LIST_READS) as (keyof typeof LIST_READS)[])
  .filter((k) => LIST_READS[k]).map((k) => `issues.${k}` as const);

/** The issues as the Issue entity, in the order given. */
export async function presentIssues(db: Kysely<DB>, rows: readonly IssueListRow[], o: PresentIssuesOptions): Promise<Issue[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [{ assignees, labels, counts }, milestones, subscribed] = await Promise.all([
    issuePageFacts(db, ids),
    milestonesByIds(db, rows.flatMap((r) => (r.milestone_id === null ? [] : [r.milestone_id]))),
    o.includeSubscribed && o.viewerId !== null ? subscribedIssueIds(db, o.viewerId, ids) : Promise.resolve(null),
  ]);
  const userIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.author_id);
    if (r.closed_by_id !== null) userIds.add(r.closed_by_id);
    for (const a of assignees.get(r.id) ?? []) userIds.add(a);
  }
  const users = new Map((await rememberedUserBasicsByIds(db, [...userIds])).map((u) => [u.id, u]));
  // Most pages have no closing request at all: the viewer's access is read only for those that do.
  const closingProjects = await projectsCountingClosingRequests(db,
    [...new Set(rows.filter((r) => counts.get(r.id)!.closing_merge_requests_count > 0).map((r) => r.project_id))], o.viewerId);
  const milestonePaths = await milestonePathsOf(db, [...milestones.values()], o.projects);
  // Each person presented once for the page: the same few appear on most of its rows.
  const basic = pagePeople(users, o.externalUrl);
  const api = flat(o.externalUrl, '/api/v4');

  return rows.map((r) => {
    const p = o.projects.get(r.project_id)!;
    const c = counts.get(r.id)!;
    const issueAssignees = (assignees.get(r.id) ?? []).flatMap((id) => { const u = basic(id); return u ? [u] : []; });
    const issueLabels = labels.get(r.id) ?? [];
    const milestone = r.milestone_id !== null ? milestones.get(r.milestone_id) : undefined;
    const tasks = taskCompletion(r.description ?? '');
    const issue: Issue = {
      id: r.id, iid: r.iid, project_id: r.project_id, title: r.title, description: r.description, state: r.state,
      created_at: r.created_at, updated_at: r.updated_at, closed_at: r.closed_at,
      closed_by: r.closed_by_id !== null ? basic(r.closed_by_id) : null,
      labels: o.withLabelsDetails ? issueLabels.map(presentLabelBasic) : issueLabels.map((l) => l.title),
      milestone: milestone ? presentMilestone(milestone, milestoneOwnerUrl(milestone, o.externalUrl, milestonePaths)) : null,
      assignees: issueAssignees,
      author: basic(r.author_id)!,
      type: r.issue_type.toUpperCase(),
      assignee: issueAssignees[0] ?? null,
      user_notes_count: c.user_notes_count,
      merge_requests_count: closingProjects.has(r.project_id) ? c.closing_merge_requests_count : 0,
      upvotes: c.upvotes,
      downvotes: c.downvotes,
      due_date: r.due_date,
      confidential: r.confidential === 1,
      discussion_locked: r.discussion_locked === null ? null : r.discussion_locked === 1,
      issue_type: r.issue_type,
      web_url: flat(o.externalUrl, '/', p.fullPath, '/-/issues/', r.iid),
      time_stats: {
        time_estimate: r.time_estimate, total_time_spent: c.total_time_spent,
        human_time_estimate: formatDuration(r.time_estimate), human_total_time_spent: formatDuration(c.total_time_spent),
      },
      task_completion_status: { count: tasks.count, completed_count: tasks.completed },
      blocking_issues_count: c.blocking_issues_count,
      has_tasks: tasks.count > 0,
      _links: {
        self: flat(api, '/projects/', r.project_id, '/issues/', r.iid),
        notes: flat(api, '/projects/', r.project_id, '/issues/', r.iid, '/notes'),
        award_emoji: flat(api, '/projects/', r.project_id, '/issues/', r.iid, '/award_emoji'),
        project: flat(api, '/projects/', r.project_id),
        closed_as_duplicate_of: null,
      },
      references: references(r, p, o.from),
      severity: 'UNKNOWN',
      moved_to_id: r.moved_to_id,
      service_desk_reply_to: null,
    };
    if (tasks.count > 0) {
      issue.task_status = flat(tasks.completed, ' of ', tasks.count, tasks.count === 1 ? ' task' : ' tasks', ' completed');
    }
    // Subscribable#subscribed? answers false for an anonymous reader.
    if (o.includeSubscribed) issue.subscribed = subscribed?.has(r.id) ?? false;
    return issue;
  });
}

/** Paths of the projects of a page of issues from many projects (group and instance lists). */
export async function issueProjectPaths(db: Kysely<DB>, projectIds: readonly number[]): Promise<Map<number, IssueProjectPath>> {
  const projects = await findProjectsByIds(db, [...new Set(projectIds)]);
  const namespaces = await namespacePathsById(db, [...new Set(projects.map((p) => p.namespace_id))]);
  return new Map(projects.map((p) => [p.id, {
    fullPath: `${namespaces.get(p.namespace_id)!.fullPath}/${p.path}`, path: p.path, namespaceId: p.namespace_id,
  }]));
}
