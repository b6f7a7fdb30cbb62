/**
 * Opening and changing a merge request (MergeRequests::CreateService, UpdateService,
 * CloseService and ReopenService of the Service 15.2, as lib/api/merge_requests.rb calls them).
 *
 * A request names two branches that must exist and, within one project, differ ("You can't use same
 * project/branch for source and target"); its source may be a branch of another project of the fork
 * network (fork-source.ts: its commits fetched into the target). One open request per source
 * branch and target branch (MergeRequest#validate_branches; the partial unique index of migration
 * 2026-12-01T0100, so two concurrent creations cannot both land: the loser learns the winner's
 * iid, "Another open merge request already exists for this source branch: !N"). A title starting
 * `Draft:`, `[Draft]`, `(Draft)` or `WIP:` marks it a draft (MergeRequest#draft?). Labels,
 * milestone, assignees and reviewers are admin_merge_request's and dropped silently for anyone
 * else (IssuableBaseService#filter_params); the Free tier keeps one assignee and one reviewer.
 * Creating takes the first diff version (MergeRequest after_create create_merge_request_diff)
 * and queues the merge status check (merge-status.ts); everything a write records — label,
 * milestone and state resource events, system notes, the `created`, `closed` and `reopened`
 * events, todos — is one transaction with it.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import type { Actor } from '../permissions/access.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { projectActor } from '../permissions/actors.ts';
import { recordEvent } from '../events/events.queries.ts';
import { addSystemNote } from '../notes/system-notes.ts';
import { createTodos, type NewTodo } from '../todos/todos.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';
import { onePerScope } from '../labels/scoped.ts';
import { findOrCreateLabels } from '../issues/issue-labels.ts';
import { availableLabelsByTitle, availableMilestone, labelsByIds } from '../issues/issue-writes.queries.ts';
import type { IssueProject } from '../issues/issue-people.ts';
import { labelOwners } from '../issues/create-issue.ts';
import { titleChangeNote } from '../issues/issue-system-notes.ts';
import { refTarget } from '../repositories/git-read.ts';
import { validRefName } from '../repositories/ref-names.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { fetchCommit, isForkRequest, sourceRefOf, syncForkSourceHead } from './fork-source.ts';
import { changedFileCount, commitIdsBetween, mergeBase } from './mr-git.ts';
import { canReadMergeRequest } from './merge-request.policy.ts';
import { cacheClosingIssues } from './closing-issues.ts';
import {
  deleteMergeRequestRow, insertDiffVersion, insertMergeRequest, labelIdsOf, linkLabels, openMergeRequestOfBranch, peopleOf,
  recordLabelEvents, resolveTodosOf,
  recordMilestoneEvent, recordStateEvent, replacePeople, unlinkLabels, updateMergeRequestRow,
} from './merge-requests.queries.ts';

/** The background job that computes a request's merge status (merge-status.ts registers its handler). */
export const MERGE_STATUS_JOB = 'merge_requests.check_merge_status';

/** MergeRequest::DRAFT_REGEX of the Service 15.2: `[Draft]`, `(Draft)`, `Draft:`, `[WIP]`, `WIP:` at the start, any case. */
const DRAFT_PREFIX = /^\s*(?:\[draft\]|\(draft\)|draft:|draft\s+-|\[wip\]|wip:)\s*/i;

export function isDraftTitle(title: string): boolean {
  return DRAFT_PREFIX.test(title);
}

export interface MergeRequestParams {
  title?: string;
  description?: string;
  sourceBranch?: string;
  targetBranch?: string;
  labels?: string[];
  addLabels?: string[];
  removeLabels?: string[];
  assigneeIds?: number[];
  reviewerIds?: number[];
  milestoneId?: number;
  removeSourceBranch?: boolean;
  squash?: boolean;
  discussionLocked?: boolean;
  stateEvent?: 'close' | 'reopen';
  /** A fork's request lets the target's mergers push to its source branch (set by whoever may push to the fork). */
  allowCollaboration?: boolean;
}

export type WriteRefusal =
  | { ok: false; reason: 'same_branch' }
  | { ok: false; reason: 'exists'; iid: number }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> };

export interface WriteContext {
  where: IssueProject;
  user: UserRow;
  actor: Actor;
  /** The target project's repository. */
  gitDir: string;
  /** The user may let the target's mergers push to a fork request's branch (only on update). */
  canAllowCollaboration?: boolean;
}

/** Where a fork's request comes from: the fork (any project of the target's fork network). */
export interface ForkSource {
  project: ProjectRow;
  gitDir: string;
  shards: StorageShard[];
  /** The user may push to the fork (MergeRequest#can_allow_collaboration?). */
  canAllowCollaboration: boolean;
}

/**
 * The people a request keeps from `ids` (filter_assignees / filter_reviewers): the first id only
 * (the Free tier's one), `[]` or `[0]` none; a user who may not read the project's merge requests
 * is dropped.
 */
async function keptUsers(db: Kysely<DB>, where: IssueProject, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0 || ids[0] === 0) return [];
  const [user] = await findUsersByIds(db, [ids[0]]);
  if (!user) return [];
  const actor = await projectActor(db, user, where.project.id, where.lineage);
  return canReadMergeRequest(actor, where.project) ? [user.id] : [];
}

/** The diff version of the request's branches now (base = merge base, start = target head). */
export async function diffVersion(gitDir: string, sourceHead: string, targetHead: string) {
  const base = await mergeBase(gitDir, targetHead, sourceHead);
  const size = base ? await changedFileCount(gitDir, base, sourceHead) : 0;
  // The version's commits, newest first, as many as a request's commits list shows (MAX_COMMITS).
  const commits = base && base !== sourceHead ? await commitIdsBetween(gitDir, base, sourceHead) : [];
  return {
    head: sourceHead, base, start: targetHead, state: base && base !== sourceHead ? 'collected' : 'empty', realSize: String(size), commits,
  };
}

/** Queues the merge status check of these requests (after a push, a creation, a retarget). */
export async function queueMergeStatusCheck(db: Kysely<DB> | Transaction<DB>, mrIds: readonly number[]): Promise<void> {
  for (const id of mrIds) await insertJob(db, { kind: MERGE_STATUS_JOB, payload: { mergeRequestId: id }, maxAttempts: 3 });
}

async function branchHead(gitDir: string, name: string | undefined): Promise<string | null> {
  if (name === undefined || !validRefName(name)) return null;
  return refTarget(gitDir, `refs/heads/${name}`);
}

export async function createMergeRequest(
  db: Kysely<DB>, c: WriteContext, p: MergeRequestParams & { title: string; sourceBranch: string; targetBranch: string },
  fork?: ForkSource,
): Promise<{ ok: true; value: MergeRequestRow } | WriteRefusal> {
  const { where, user, actor } = c;
  const sourceProject = fork?.project ?? where.project;
  // MergeRequest#validate_branches: the same branch is refused within one project only.
  if (!fork && p.sourceBranch === p.targetBranch) return { ok: false, reason: 'same_branch' };
  const [sourceHead, targetHead] = await Promise.all([
    branchHead(fork?.gitDir ?? c.gitDir, p.sourceBranch), branchHead(c.gitDir, p.targetBranch),
  ]);
  const base: string[] = [];
  if (!sourceHead) base.push(`Source branch "${p.sourceBranch}" does not exist`);
  if (!targetHead) base.push(`Target branch "${p.targetBranch}" does not exist`);
  if (base.length > 0) return { ok: false, reason: 'invalid', errors: { base } };
  const existing = await openMergeRequestOfBranch(db, where.project.id, sourceProject.id, p.sourceBranch, p.targetBranch);
  if (existing) return { ok: false, reason: 'exists', iid: existing.iid };
  // A fork's commits are copied into the target before anything is computed there (fork-source.ts).
  if (fork) await fetchCommit(c.gitDir, fork.gitDir, sourceHead!);

  const triage = canOnProject(actor, 'admin_merge_request', where.project);
  const owners = labelOwners(where);
  const assignees = triage && p.assigneeIds ? await keptUsers(db, where, p.assigneeIds) : [];
  const reviewers = triage && p.reviewerIds ? await keptUsers(db, where, p.reviewerIds) : [];
  const version = await diffVersion(c.gitDir, sourceHead!, targetHead!);
  const now = nowIso();
  try {
    const mr = await db.transaction().execute(async (trx) => {
      const milestone = triage && p.milestoneId ? await availableMilestone(trx, owners, p.milestoneId) : undefined;
      const iid = await nextIid(trx, { project_id: where.project.id }, 'merge_requests');
      const row = await insertMergeRequest(trx, {
        iid, project_id: where.project.id, source_project_id: sourceProject.id, source_branch: p.sourceBranch,
        allow_collaboration: fork?.canAllowCollaboration && p.allowCollaboration ? 1 : 0,
        target_branch: p.targetBranch, author_id: user.id, title: p.title, description: p.description ?? null, state: 'opened',
        merge_status: 'unchecked', draft: isDraftTitle(p.title) ? 1 : 0, squash: p.squash ? 1 : 0,
        force_remove_source_branch: p.removeSourceBranch === undefined ? null : p.removeSourceBranch ? 1 : 0,
        should_remove_source_branch: null, merge_user_id: null, merge_params: null, merge_commit_sha: null,
        squash_commit_sha: null, merge_error: null, merged_by_id: null, merged_at: null, closed_by_id: null, closed_at: null,
        milestone_id: milestone?.id ?? null, discussion_locked: null, rebase_commit_sha: null, merge_ref_sha: null,
        merge_status_heads: null, updated_by_id: null, last_edited_at: null, last_edited_by_id: null, created_at: now, updated_at: now,
      });
      await replacePeople(trx, 'merge_request_assignees', row.id, assignees, now);
      await replacePeople(trx, 'merge_request_reviewers', row.id, reviewers, now);
      if (triage && p.labels && p.labels.length > 0) {
        const labels = onePerScope(await findOrCreateLabels(trx, owners, p.labels, now));
        await linkLabels(trx, row.id, labels.map((l) => l.id), now);
        await recordLabelEvents(trx, row.id, user.id, { added: labels.map((l) => l.id), removed: [] }, now);
      }
      if (milestone) await recordMilestoneEvent(trx, row.id, user.id, { milestoneId: milestone.id, action: 'add', state: 'opened' }, now);
      await insertDiffVersion(trx, { mrId: row.id, ...version, now });
      await cacheClosingIssues(trx, where.project, row, row.description, now);
      await recordEvent(trx, {
        project_id: where.project.id, author_id: user.id, action: 'created', target_type: 'MergeRequest', target_id: row.id,
      });
      const todo = (user_id: number, action: NewTodo['action']): NewTodo => ({
        user_id, author_id: user.id, project_id: where.project.id, target_type: 'MergeRequest', target_id: row.id, action,
      });
      await createTodos(trx, [
        ...assignees.filter((id) => id !== user.id).map((id) => todo(id, 'assigned')),
        ...reviewers.filter((id) => id !== user.id).map((id) => todo(id, 'review_requested')),
      ], now);
      await queueMergeStatusCheck(trx, [row.id]);
      // The merge request webhooks, queued with the request (MergeRequests::CreateService, action open).
      await queueObjectHook(trx, { kind: 'merge_request', id: row.id, projectId: where.project.id, action: 'open', userId: user.id });
      return row;
    });
    // The head ref the target reads the fork's branch from (the merge status check also brings it up to date).
    if (fork) await syncForkSourceHead(db, fork.shards, mr, where.project);
    return { ok: true, value: mr };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const winner = await openMergeRequestOfBranch(db, where.project.id, sourceProject.id, p.sourceBranch, p.targetBranch);
    if (winner) return { ok: false, reason: 'exists', iid: winner.iid };
    throw err;
  }
}

/** Labels after a change: `labels` replaces, then `addLabels` and `removeLabels` apply (IssuableBaseService#process_label_ids). */
async function nextLabels(
  trx: Transaction<DB>, c: WriteContext, current: number[], p: MergeRequestParams, now: string,
): Promise<number[] | null> {
  if (p.labels === undefined && p.addLabels === undefined && p.removeLabels === undefined) return null;
  const owners = labelOwners(c.where);
  let ids = p.labels !== undefined ? (await findOrCreateLabels(trx, owners, p.labels, now)).map((l) => l.id) : [...current];
  if (p.addLabels) ids.push(...(await findOrCreateLabels(trx, owners, p.addLabels, now)).map((l) => l.id));
  if (p.removeLabels) {
    const removed = new Set((await availableLabelsByTitle(trx, owners, p.removeLabels)).map((l) => l.id));
    ids = ids.filter((id) => !removed.has(id));
  }
  const rows = await labelsByIds(trx, [...new Set(ids)]);
  const labels = onePerScope(ids.flatMap((id) => rows.filter((r) => r.id === id)));
  return [...new Set(labels.map((l) => l.id))];
}

export async function updateMergeRequest(
  db: Kysely<DB>, c: WriteContext, mr: MergeRequestRow, p: MergeRequestParams,
): Promise<{ ok: true; value: MergeRequestRow } | WriteRefusal> {
  const { where, user, actor } = c;
  const triage = canOnProject(actor, 'admin_merge_request', where.project);
  const now = nowIso();
  let retarget: Awaited<ReturnType<typeof diffVersion>> | null = null;
  if (p.targetBranch !== undefined && p.targetBranch !== mr.target_branch) {
    if (!isForkRequest(mr) && p.targetBranch === mr.source_branch) return { ok: false, reason: 'same_branch' };
    const [targetHead, sourceHead] = await Promise.all([
      branchHead(c.gitDir, p.targetBranch), refTarget(c.gitDir, sourceRefOf(mr)),
    ]);
    if (!targetHead) return { ok: false, reason: 'invalid', errors: { target_branch: ['does not exist'] } };
    if (sourceHead) retarget = await diffVersion(c.gitDir, sourceHead, targetHead);
  }
  const assignees = triage && p.assigneeIds ? await keptUsers(db, where, p.assigneeIds) : null;
  const reviewers = triage && p.reviewerIds ? await keptUsers(db, where, p.reviewerIds) : null;
  const [oldAssignees, oldReviewers] = await Promise.all([
    peopleOf(db, 'merge_request_assignees', [mr.id]).then((m) => m.get(mr.id) ?? []),
    peopleOf(db, 'merge_request_reviewers', [mr.id]).then((m) => m.get(mr.id) ?? []),
  ]);
  const usersById = new Map((await findUsersByIds(db, [...new Set([...(assignees ?? []), ...(reviewers ?? []), ...oldAssignees,
    ...oldReviewers])])).map((u) => [u.id, u]));
  const mention = (ids: number[]) => ids.map((id) => `@${usersById.get(id)?.username ?? 'ghost'}`).join(', ');

  try {
    const updated = await db.transaction().execute(async (trx) => {
      const set: Parameters<typeof updateMergeRequestRow>[2] = {};
      const eventOf = (id: number) => ({ project_id: where.project.id, author_id: user.id, target_type: 'MergeRequest', target_id: id });
      const note = (text: string, action: string) => addSystemNote(trx, {
        project_id: where.project.id, noteable_type: 'MergeRequest', noteable_id: mr.id, author_id: user.id, note: text, action,
      }, now);
      if (p.title !== undefined && p.title !== mr.title) {
        set.title = p.title;
        set.draft = isDraftTitle(p.title) ? 1 : 0;
        await note(titleChangeNote(mr.title, p.title), 'title');
      }
      if (p.description !== undefined && p.description !== (mr.description ?? '')) {
        set.description = p.description;
        set.last_edited_at = now;
        set.last_edited_by_id = user.id;
        await note('changed the description', 'description');
      }
      if (retarget) {
        set.target_branch = p.targetBranch!;
        set.merge_status = 'unchecked';
        set.merge_status_heads = null;
        await note(`changed target branch from \`${mr.target_branch}\` to \`${p.targetBranch!}\``, 'branch');
        await insertDiffVersion(trx, { mrId: mr.id, ...retarget, now });
        await queueMergeStatusCheck(trx, [mr.id]);
      }
      if (p.removeSourceBranch !== undefined) set.force_remove_source_branch = p.removeSourceBranch ? 1 : 0;
      if (p.squash !== undefined) set.squash = p.squash ? 1 : 0;
      if (p.allowCollaboration !== undefined && c.canAllowCollaboration) set.allow_collaboration = p.allowCollaboration ? 1 : 0;
      if (triage && p.discussionLocked !== undefined && (mr.discussion_locked === 1) !== p.discussionLocked) {
        set.discussion_locked = p.discussionLocked ? 1 : 0;
        const action = p.discussionLocked ? 'locked' : 'unlocked';
        await note(`${action} this merge request`, action);
      }
      if (triage && p.milestoneId !== undefined) {
        const milestone = p.milestoneId === 0 ? undefined : await availableMilestone(trx, labelOwners(where), p.milestoneId);
        const next = milestone?.id ?? null;
        if ((p.milestoneId === 0 || milestone) && next !== mr.milestone_id) {
          set.milestone_id = next;
          if (mr.milestone_id !== null) {
            await recordMilestoneEvent(trx, mr.id, user.id, { milestoneId: mr.milestone_id, action: 'remove', state: mr.state }, now);
          }
          if (next !== null) await recordMilestoneEvent(trx, mr.id, user.id, { milestoneId: next, action: 'add', state: mr.state }, now);
        }
      }
      if (triage) {
        const current = await labelIdsOf(trx, mr.id);
        const next = await nextLabels(trx, c, current, p, now);
        if (next) {
          const added = next.filter((id) => !current.includes(id));
          const removed = current.filter((id) => !next.includes(id));
          await unlinkLabels(trx, mr.id, removed);
          await linkLabels(trx, mr.id, added, now);
          await recordLabelEvents(trx, mr.id, user.id, { added, removed }, now);
        }
      }
      const todos: NewTodo[] = [];
      const todo = (user_id: number, action: NewTodo['action']): NewTodo => ({
        user_id, author_id: user.id, project_id: where.project.id, target_type: 'MergeRequest', target_id: mr.id, action,
      });
      if (assignees && assignees.join() !== oldAssignees.join()) {
        await replacePeople(trx, 'merge_request_assignees', mr.id, assignees, now);
        const added = assignees.filter((id) => !oldAssignees.includes(id));
        const removed = oldAssignees.filter((id) => !assignees.includes(id));
        const parts = [...(added.length ? [`assigned to ${mention(added)}`] : []), ...(removed.length ? [`unassigned ${mention(removed)}`] : [])];
        await note(parts.join(' and '), 'assignee');
        todos.push(...added.filter((id) => id !== user.id).map((id) => todo(id, 'assigned')));
      }
      if (reviewers && reviewers.join() !== oldReviewers.join()) {
        await replacePeople(trx, 'merge_request_reviewers', mr.id, reviewers, now);
        const added = reviewers.filter((id) => !oldReviewers.includes(id));
        const removed = oldReviewers.filter((id) => !reviewers.includes(id));
        const parts = [
          ...(added.length ? [`requested review from ${mention(added)}`] : []),
          ...(removed.length ? [`removed review request for ${mention(removed)}`] : []),
        ];
        await note(parts.join(' and '), 'reviewer');
        todos.push(...added.filter((id) => id !== user.id).map((id) => todo(id, 'review_requested')));
      }
      await createTodos(trx, todos, now);
      if (p.stateEvent === 'close' && (mr.state === 'opened' || mr.state === 'locked')) {
        Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: user.id, merge_when_pipeline_succeeds: 0 });
        await recordStateEvent(trx, mr.id, user.id, 'closed', now);
        await recordEvent(trx, { ...eventOf(mr.id), action: 'closed' });
        await resolveTodosOf(trx, mr.id, now);
      } else if (p.stateEvent === 'reopen' && mr.state === 'closed') {
        Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null, merge_status: 'unchecked', merge_status_heads: null });
        await recordStateEvent(trx, mr.id, user.id, 'reopened', now);
        await recordEvent(trx, { ...eventOf(mr.id), action: 'reopened' });
        await queueMergeStatusCheck(trx, [mr.id]);
      }
      // The closing issues follow the description while the request stays open (MergeRequests::UpdateService).
      if (set.description !== undefined) {
        await cacheClosingIssues(trx, where.project, { id: mr.id, state: set.state ?? mr.state }, set.description, now);
      }
      const changed = Object.keys(set).length > 0;
      if (!changed && !assignees && !reviewers && p.labels === undefined && p.addLabels === undefined && p.removeLabels === undefined) {
        return mr;
      }
      const row = await updateMergeRequestRow(trx, mr.id, { ...set, updated_at: now, updated_by_id: user.id });
      // The merge request webhooks with what changed (close, reopen or update).
      const changes: Record<string, { previous: unknown; current: unknown }> = {};
      for (const key of Object.keys(set) as (keyof typeof row)[]) changes[key] = { previous: mr[key], current: row[key] };
      const action = set.state === 'closed' ? 'close' : set.state === 'opened' ? 'reopen' : 'update';
      await queueObjectHook(trx, { kind: 'merge_request', id: mr.id, projectId: mr.project_id, action, userId: user.id, changes });
      return row;
    });
    return { ok: true, value: updated };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A reopen while another request of the branch is open (validate_branches on save).
    const other = await openMergeRequestOfBranch(db, where.project.id, mr.source_project_id ?? where.project.id, mr.source_branch,
      p.targetBranch ?? mr.target_branch);
    return { ok: false, reason: 'exists', iid: other?.iid ?? mr.iid };
  }
}

/** Removes the request and what names it (Issuable::DestroyService). */
export async function deleteMergeRequest(db: Kysely<DB>, mrId: number): Promise<void> {
  await db.transaction().execute((trx) => deleteMergeRequestRow(trx, mrId));
}
