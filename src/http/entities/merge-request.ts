/**
 * The merge request entities (lib/api/entities/merge_request_basic.rb and merge_request.rb of the
 * Service 15.2): MergeRequestBasic for lists, MergeRequest for single reads adding `subscribed`,
 * `changes_count`, `diff_refs`, `merge_error`, the pipelines of its head, `user.can_merge` and
 * friends. `presentMergeRequests` batches what a page needs into a fixed number of queries.
 *
 * `detailed_merge_status` follows MergeRequests::Mergeability::DetailedMergeStatusService:
 * `checking` until the background check ran, then `not_open`, `draft_status`,
 * `discussions_not_resolved`, `broken_status` (a conflict), `need_rebase` (fast-forward only
 * projects), then — every other check passing — the CI check of a project that merges only after a
 * successful pipeline (CheckCiStatusService, MergeRequest#mergeable_ci_state?): `ci_still_running`
 * while the head pipeline is active, `ci_must_pass` when it is missing or did not succeed, else
 * `mergeable`.
 */
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { rememberedUserBasicsByIds } from '../../domain/users/users-batch.queries.ts';
import { milestonesByIds } from '../../domain/issues/issues.queries.ts';
import { formatDuration } from '../../domain/issues/time-tracking.ts';
import { taskCompletion } from '../../domain/issues/task-list.ts';
import {
  headPipelinesOf, mergeRequestCountsAndLatestDiffs, mergeRequestPageFacts, mergeRulesOfProjects, subscribedMergeRequestIds,
} from '../../domain/merge-requests/merge-requests.queries.ts';
import { ffPossibleOf } from '../../domain/merge-requests/merge-status.ts';
import { pagePeople, UserBasicSchema } from './user.ts';
import { flat } from './serializers.ts';
import { LabelBasicSchema, presentLabelBasic } from './label.ts';
import { MilestoneSchema, presentMilestone } from './milestone.ts';
import { milestoneOwnerUrl, milestonePathsOf, TimeStatsSchema, type IssueProjectPath, type ReferenceContext } from './issue.ts';
import { PipelineBasicSchema, presentPipelineBasic } from './pipeline.ts';
import { collaboratingRequestIds } from '../../domain/merge-requests/fork-source.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const DiffRefsSchema = Type.Object({
  base_sha: Nullable(Type.String()), head_sha: Nullable(Type.String()), start_sha: Nullable(Type.String()),
}, { title: 'DiffRefs' });

export const MergeRequestBasicSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: Nullable(Type.String()),
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  merged_by: Nullable(UserBasicSchema),
  merge_user: Nullable(UserBasicSchema),
  merged_at: Nullable(Type.String()),
  closed_by: Nullable(UserBasicSchema),
  closed_at: Nullable(Type.String()),
  target_branch: Type.String(),
  source_branch: Type.String(),
  user_notes_count: Type.Integer(),
  upvotes: Type.Integer(),
  downvotes: Type.Integer(),
  author: UserBasicSchema,
  assignees: Type.Array(UserBasicSchema),
  assignee: Nullable(UserBasicSchema),
  reviewers: Type.Array(UserBasicSchema),
  source_project_id: Nullable(Type.Integer()),
  target_project_id: Type.Integer(),
  /** A fork's request only: the target's mergers may push to its source branch. */
  allow_collaboration: Type.Optional(Type.Boolean()),
  allow_maintainer_to_push: Type.Optional(Type.Boolean()),
  labels: Type.Union([Type.Array(Type.String()), Type.Array(LabelBasicSchema)]),
  draft: Type.Boolean(),
  work_in_progress: Type.Boolean(),
  milestone: Nullable(MilestoneSchema),
  merge_when_pipeline_succeeds: Type.Boolean(),
  merge_status: Type.String(),
  detailed_merge_status: Type.String(),
  sha: Nullable(Type.String()),
  merge_commit_sha: Nullable(Type.String()),
  squash_commit_sha: Nullable(Type.String()),
  discussion_locked: Nullable(Type.Boolean()),
  should_remove_source_branch: Nullable(Type.Boolean()),
  force_remove_source_branch: Nullable(Type.Boolean()),
  reference: Type.String(),
  references: Type.Object({ short: Type.String(), relative: Type.String(), full: Type.String() }),
  web_url: Type.String(),
  time_stats: TimeStatsSchema,
  squash: Type.Boolean(),
  task_completion_status: Type.Object({ count: Type.Integer(), completed_count: Type.Integer() }),
  has_conflicts: Type.Boolean(),
  blocking_discussions_resolved: Type.Boolean(),
}, { title: 'MergeRequestBasic' });

export const MergeRequestSchema = Type.Object({
  ...MergeRequestBasicSchema.properties,
  subscribed: Type.Optional(Type.Boolean()),
  changes_count: Nullable(Type.String()),
  latest_build_started_at: Nullable(Type.String()),
  latest_build_finished_at: Nullable(Type.String()),
  first_deployed_to_production_at: Nullable(Type.String()),
  pipeline: Nullable(PipelineBasicSchema),
  head_pipeline: Nullable(PipelineBasicSchema),
  diff_refs: Nullable(DiffRefsSchema),
  merge_error: Nullable(Type.String()),
  rebase_in_progress: Type.Optional(Type.Boolean()),
  diverged_commits_count: Type.Optional(Type.Integer()),
  first_contribution: Type.Boolean(),
  user: Type.Object({ can_merge: Type.Boolean() }),
}, { title: 'MergeRequest' });

export type MergeRequestBasic = Static<typeof MergeRequestBasicSchema>;
export type MergeRequestEntity = Static<typeof MergeRequestSchema>;

export interface PresentMergeRequestsOptions {
  externalUrl: string;
  projects: ReadonlyMap<number, IssueProjectPath>;
  viewerId: number | null;
  from: ReferenceContext;
  withLabelsDetails?: boolean;
  /** The MergeRequest entity (single reads) rather than MergeRequestBasic. */
  full?: { canMerge: boolean; includeRebaseInProgress?: boolean; divergedCommitsCount?: number };
}

function references(mr: MergeRequestListRow, p: IssueProjectPath, from: ReferenceContext) {
  // Flat strings (serializers.ts flat): a list's answer is written by JSON.stringify.
  const short = flat('!', mr.iid);
  const full = flat(p.fullPath, short);
  let relative = full;
  if (from && 'project' in from && from.project === mr.project_id) relative = short;
  else if (from && 'group' in from && from.group === p.namespaceId) relative = flat(p.path, short);
  return { short, relative, full };
}

/** DetailedMergeStatusService's answer from what kiln stores. */
/** Pipeline states that may still end in success (Ci::HasStatus::ACTIVE_STATUSES with created). */
const ACTIVE_PIPELINE = new Set(['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled']);

export interface MergeCiRule {
  /** The project's only_allow_merge_if_pipeline_succeeds. */
  required: boolean;
  allowSkipped: boolean;
  /** The status of the request's head pipeline, null without one. */
  headStatus: string | null;
}

export function detailedMergeStatus(
  mr: MergeRequestListRow, o: { unresolved: number; onlyIfResolved: boolean; ffOnly: boolean; ci?: MergeCiRule },
): string {
  if (mr.state !== 'opened' && mr.state !== 'locked') return 'not_open';
  if (mr.merge_status === 'unchecked' || mr.merge_status === 'checking') return 'checking';
  if (mr.draft === 1) return 'draft_status';
  if (o.onlyIfResolved && o.unresolved > 0) return 'discussions_not_resolved';
  if (mr.merge_status === 'cannot_be_merged' || mr.merge_status === 'cannot_be_merged_recheck') return 'broken_status';
  if (o.ffOnly && ffPossibleOf(mr.merge_status_heads) === false) return 'need_rebase';
  const ci = o.ci;
  if (ci?.required === true) {
    const status = ci.headStatus;
    const passes = status === 'success' || (status === 'skipped' && ci.allowSkipped);
    if (!passes) return status !== null && ACTIVE_PIPELINE.has(status) ? 'ci_still_running' : 'ci_must_pass';
  }
  return 'mergeable';
}

/**
 * The columns a list's page reads (true): all but the counters (read afresh beside the page, as a
 * row a caller holds may predate a note of the same request) and those the list entity never
 * shows; every column is named here, so a new one is a choice.
 * Each column a row carries costs better-sqlite3 about 70 ns to read even when null (bench:
 * 21 rows of every column 68 µs, of ids alone 14 µs; issue 30's Measure).
 */
const LIST_READS = {
  id: true, iid: true, project_id: true, source_project_id: true, source_branch: true, target_branch: true,
  author_id: true, title: true, description: true, state: true, merge_status: true, draft: true, squash: true,
  force_remove_source_branch: true, should_remove_source_branch: true, merge_when_pipeline_succeeds: true,
  merge_user_id: true, merge_params: true, merge_commit_sha: true, squash_commit_sha: true, merge_error: true,
  merged_by_id: true, merged_at: true, closed_by_id: true, closed_at: true, milestone_id: true,
  discussion_locked: true, time_estimate: true, rebase_in_progress: true, rebase_commit_sha: false,
  merge_ref_sha: false, merge_status_heads: true, updated_by_id: false, last_edited_at: false,
  last_edited_by_id: false, created_at: true, updated_at: true, allow_collaboration: true, user_notes_count: false,
  upvotes_count: false, downvotes_count: false, total_time_spent: false, unresolved_notes_count: false,
} as const satisfies Record<keyof MergeRequestRow, boolean>;
type ListRead = { [K in keyof typeof LIST_READS]: (typeof LIST_READS)[K] extends true ? K : never }[keyof typeof LIST_READS];
export type MergeRequestListRow = Pick<MergeRequestRow, ListRead>;
export const MERGE_REQUEST_LIST_COLUMNS = (Object.keys(LIST_READS) as (keyof typeof LIST_READS)[])
  .filter((k) => LIST_READS[k]).map((k) => `merge_requests.${k}` as const);

export async function presentMergeRequests(
  db: Kysely<DB>, rows: readonly MergeRequestListRow[], o: PresentMergeRequestsOptions,
): Promise<MergeRequestEntity[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [{ assignees, reviewers, labels }, milestones, { counts, latest }, subscribed] = await Promise.all([
    mergeRequestPageFacts(db, ids),
    milestonesByIds(db, rows.flatMap((r) => (r.milestone_id === null ? [] : [r.milestone_id]))),
    mergeRequestCountsAndLatestDiffs(db, ids),
    o.full && o.viewerId !== null ? subscribedMergeRequestIds(db, o.viewerId, ids) : Promise.resolve(null),
  ]);
  // MergeRequest#allow_collaboration: the stored choice only while a collaborative push is possible
  // (neither project private, the source branch unprotected); asked in one statement of the rows that chose it.
  const collaborating = await collaboratingRequestIds(db, rows);
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const projectRules = new Map((await mergeRulesOfProjects(db, projectIds)).map((p) => [p.id, p]));
  // A list reads head pipelines only for open requests whose project merges after a successful
  // pipeline: their detailed status depends on it.
  const ciGated = (r: MergeRequestListRow) => (r.state === 'opened' || r.state === 'locked')
    && projectRules.get(r.project_id)?.only_allow_merge_if_pipeline_succeeds === 1;
  const needPipeline = o.full ? rows : rows.filter(ciGated);
  const pipelines = needPipeline.length > 0 ? await headPipelinesOf(db, needPipeline.map((r) => r.id)) : new Map<number, never>();
  const userIds = new Set<number>();
  for (const r of rows) {
    for (const id of [r.author_id, r.closed_by_id, r.merged_by_id, r.merge_user_id]) if (id !== null) userIds.add(id);
    for (const a of [...(assignees.get(r.id) ?? []), ...(reviewers.get(r.id) ?? [])]) userIds.add(a);
  }
  const users = new Map((await rememberedUserBasicsByIds(db, [...userIds])).map((u) => [u.id, u]));
  const milestonePaths = await milestonePathsOf(db, [...milestones.values()], o.projects);
  // Each person presented once for the page: the same few appear on most of its rows.
  const basic = pagePeople(users, o.externalUrl);
  const people = (list: number[] | undefined) => (list ?? []).flatMap((id) => { const u = basic(id); return u ? [u] : []; });

  return rows.map((r) => {
    const p = o.projects.get(r.project_id)!;
    const c = counts.get(r.id)!;
    const rules = projectRules.get(r.project_id);
    const mrAssignees = people(assignees.get(r.id));
    const mrLabels = labels.get(r.id) ?? [];
    const milestone = r.milestone_id !== null ? milestones.get(r.milestone_id) : undefined;
    const tasks = taskCompletion(r.description ?? '');
    const diff = latest.get(r.id);
    const refs = references(r, p, o.from);
    const merger = r.merge_user_id ?? r.merged_by_id;
    const entity: MergeRequestBasic = {
      id: r.id, iid: r.iid, project_id: r.project_id, title: r.title, description: r.description, state: r.state,
      created_at: r.created_at, updated_at: r.updated_at,
      merged_by: r.merged_by_id !== null ? basic(r.merged_by_id) : null,
      merge_user: merger !== null ? basic(merger) : null,
      merged_at: r.merged_at,
      closed_by: r.closed_by_id !== null ? basic(r.closed_by_id) : null,
      closed_at: r.closed_at,
      target_branch: r.target_branch, source_branch: r.source_branch,
      user_notes_count: c.user_notes_count, upvotes: c.upvotes, downvotes: c.downvotes,
      author: basic(r.author_id)!,
      assignees: mrAssignees, assignee: mrAssignees[0] ?? null, reviewers: people(reviewers.get(r.id)),
      source_project_id: r.source_project_id, target_project_id: r.project_id,
      // MergeRequestBasic exposes these for a fork's request only (`if: for_fork?`).
      ...(r.source_project_id !== r.project_id
        ? { allow_collaboration: collaborating.has(r.id), allow_maintainer_to_push: collaborating.has(r.id) } : {}),
      labels: o.withLabelsDetails ? mrLabels.map(presentLabelBasic) : mrLabels.map((l) => l.title),
      draft: r.draft === 1, work_in_progress: r.draft === 1,
      milestone: milestone ? presentMilestone(milestone, milestoneOwnerUrl(milestone, o.externalUrl, milestonePaths)) : null,
      merge_when_pipeline_succeeds: r.merge_when_pipeline_succeeds === 1,
      merge_status: r.merge_status,
      detailed_merge_status: detailedMergeStatus(r, {
        unresolved: c.unresolved_discussions, onlyIfResolved: rules?.only_allow_merge_if_all_discussions_are_resolved === 1,
        ffOnly: rules?.merge_method === 'ff' || rules?.merge_method === 'rebase_merge',
        ci: {
          required: rules?.only_allow_merge_if_pipeline_succeeds === 1, allowSkipped: rules?.allow_merge_on_skipped_pipeline === 1,
          headStatus: pipelines.get(r.id)?.status ?? null,
        },
      }),
      sha: diff?.head_commit_sha ?? null,
      merge_commit_sha: r.merge_commit_sha, squash_commit_sha: r.squash_commit_sha,
      discussion_locked: r.discussion_locked === null ? null : r.discussion_locked === 1,
      should_remove_source_branch: r.should_remove_source_branch === null ? null : r.should_remove_source_branch === 1,
      force_remove_source_branch: r.force_remove_source_branch === null ? null : r.force_remove_source_branch === 1,
      reference: refs.short, references: refs,
      web_url: flat(o.externalUrl, '/', p.fullPath, '/-/merge_requests/', r.iid),
      time_stats: {
        time_estimate: r.time_estimate, total_time_spent: c.total_time_spent,
        human_time_estimate: formatDuration(r.time_estimate), human_total_time_spent: formatDuration(c.total_time_spent),
      },
      squash: r.squash === 1,
      task_completion_status: { count: tasks.count, completed_count: tasks.completed },
      has_conflicts: r.merge_status === 'cannot_be_merged',
      blocking_discussions_resolved: !(rules?.only_allow_merge_if_all_discussions_are_resolved === 1 && c.unresolved_discussions > 0),
    };
    if (!o.full) return entity as MergeRequestEntity;
    const pipeline = pipelines.get(r.id);
    const webUrl = `${o.externalUrl}/${p.fullPath}`;
    const full: MergeRequestEntity = {
      ...entity,
      subscribed: subscribed?.has(r.id) ?? false,
      changes_count: diff?.real_size ?? null,
      latest_build_started_at: pipeline?.started_at ?? null,
      latest_build_finished_at: pipeline?.finished_at ?? null,
      first_deployed_to_production_at: null,
      pipeline: pipeline ? presentPipelineBasic(pipeline, webUrl) : null,
      head_pipeline: pipeline ? presentPipelineBasic(pipeline, webUrl) : null,
      diff_refs: diff ? { base_sha: diff.base_commit_sha, head_sha: diff.head_commit_sha, start_sha: diff.start_commit_sha } : null,
      merge_error: r.merge_error,
      first_contribution: false,
      user: { can_merge: o.full.canMerge },
    };
    if (o.full.includeRebaseInProgress) full.rebase_in_progress = r.rebase_in_progress === 1;
    if (o.full.divergedCommitsCount !== undefined) full.diverged_commits_count = o.full.divergedCommitsCount;
    return full;
  });
}
