/**
 * The smaller writes on a merge request: time tracking (TimeTrackable of the Service 15.2, with
 * its system notes), approvals in the CE form (MergeRequests::ApprovalService / RemoveApprovalService:
 * one approval per user, an `approved` event and system note), merge when pipeline succeeds
 * (AutoMerge::MergeWhenPipelineSucceedsService: set, cancelled, and carried out when the head
 * pipeline succeeds), and the rebase queued by PUT …/rebase (MergeRequests::RebaseService:
 * the source's commits replayed onto the target head, the source branch moved with its old value
 * checked; a fork's branch in the fork, fork-source.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { nowIso } from '../clock.ts';
import { formatDuration } from '../issues/time-tracking.ts';
import { addSystemNote } from '../notes/system-notes.ts';
import { recordEvent } from '../events/events.queries.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import type { CompletedPipeline } from '../pipelines/pipeline-hooks.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { refTarget } from '../repositories/git-read.ts';
import { projectRepository, updateRefs } from '../repositories/project-repository.ts';
import { afterRefUpdate } from '../repositories/after-ref-update.ts';
import { mergeBase, rebaseCommits } from './mr-git.ts';
import { acceptMergeRequest } from './accept.ts';
import { fetchCommit, isForkRequest, sourceRefOf, syncForkSourceHead } from './fork-source.ts';
import type { MergeOptions } from './merge.ts';
import {
  addPerson, autoMergeCandidates, findMergeRequestById, insertTimelog, latestDiffsOf, removePerson, totalTimeSpentOn,
  updateMergeRequestIf, updateMergeRequestRow,
} from './merge-requests.queries.ts';

export const REBASE_JOB = 'merge_requests.rebase';

function note(db: Kysely<DB>, mr: MergeRequestRow, userId: number, text: string, action: string, now: string) {
  return addSystemNote(db, {
    project_id: mr.project_id, noteable_type: 'MergeRequest', noteable_id: mr.id, author_id: userId, note: text, action,
  }, now);
}

export async function setMergeRequestEstimate(db: Kysely<DB>, mr: MergeRequestRow, userId: number, seconds: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    const before = await findMergeRequestById(trx, mr.id);
    if (!before || before.time_estimate === seconds) return;
    await updateMergeRequestRow(trx, mr.id, { time_estimate: seconds, updated_at: now, updated_by_id: userId });
    await note(trx, mr, userId, seconds === 0 ? 'removed time estimate' : `changed time estimate to ${formatDuration(seconds)}`, 'time_tracking', now);
  });
}

/** Logs time spent (negative subtracts; more than the total is refused, TimeTrackable#check_negative_time_spent). */
export async function addMergeRequestTimeSpent(
  db: Kysely<DB>, mr: MergeRequestRow, userId: number, seconds: number, summary: string | null,
): Promise<boolean> {
  if (seconds === 0) return true;
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    if (seconds < 0 && -seconds > await totalTimeSpentOn(trx, mr.id)) return false;
    await insertTimelog(trx, mr.id, userId, seconds, summary, now);
    await updateMergeRequestRow(trx, mr.id, { updated_at: now });
    await note(trx, mr, userId, `${seconds > 0 ? 'added' : 'subtracted'} ${formatDuration(Math.abs(seconds))} of time spent`, 'time_tracking', now);
    return true;
  });
}

export async function resetMergeRequestTimeSpent(db: Kysely<DB>, mr: MergeRequestRow, userId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    const total = await totalTimeSpentOn(trx, mr.id);
    if (total !== 0) await insertTimelog(trx, mr.id, userId, -total, null, now);
    await updateMergeRequestRow(trx, mr.id, { updated_at: now });
    await note(trx, mr, userId, 'removed time spent', 'time_tracking', now);
  });
}

/** An approval by the user; false when they had approved already (the primary key decides). */
export async function approveMergeRequest(db: Kysely<DB>, mr: MergeRequestRow, userId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    if (!await addPerson(trx, 'approvals', mr.id, userId, now)) return false;
    await note(trx, mr, userId, 'approved this merge request', 'approved', now);
    await recordEvent(trx, {
      project_id: mr.project_id, author_id: userId, action: 'approved', target_type: 'MergeRequest', target_id: mr.id,
    });
    return true;
  });
}

export async function unapproveMergeRequest(db: Kysely<DB>, mr: MergeRequestRow, userId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    if (!await removePerson(trx, 'approvals', mr.id, userId)) return false;
    await note(trx, mr, userId, 'unapproved this merge request', 'unapproved', now);
    return true;
  });
}

/** Sets merge when pipeline succeeds with the merge's options (the request stays open until then). */
export async function setAutoMerge(db: Kysely<DB>, mr: MergeRequestRow, userId: number, o: MergeOptions): Promise<MergeRequestRow> {
  const now = nowIso();
  return db.transaction().execute(async (trx) => {
    const row = await updateMergeRequestRow(trx, mr.id, {
      merge_when_pipeline_succeeds: 1, merge_user_id: userId, merge_params: JSON.stringify(o), updated_at: now,
    });
    if (mr.merge_when_pipeline_succeeds !== 1) {
      await note(trx, mr, userId, `enabled an automatic merge when the pipeline for ${(await latestDiffsOf(trx, [mr.id]))[0]?.head_commit_sha ?? ''} succeeds`,
        'merge', now);
    }
    return row;
  });
}

export async function cancelAutoMerge(db: Kysely<DB>, mr: MergeRequestRow, userId: number): Promise<void> {
  const now = nowIso();
  await db.transaction().execute(async (trx) => {
    await updateMergeRequestRow(trx, mr.id, { merge_when_pipeline_succeeds: 0, merge_user_id: null, merge_params: null, updated_at: now });
    await note(trx, mr, userId, 'canceled the automatic merge', 'merge', now);
  });
}

/**
 * A finished pipeline of a branch merges the requests waiting for it when it succeeded at their
 * head (AutoMerge::MergeWhenPipelineSucceedsService#process); a failure leaves the wait set, as
 * the Service keeps it until a new pipeline or a cancel. A merge that cannot happen records why.
 */
export async function processAutoMerge(env: CiEnv, pipeline: CompletedPipeline): Promise<void> {
  if (pipeline.status !== 'success' && pipeline.status !== 'skipped') return;
  // A merge request pipeline merges its own request; a branch pipeline the requests of its branch.
  const own = pipeline.mergeRequestId === null ? undefined : await findMergeRequestById(env.db, pipeline.mergeRequestId);
  const candidates = pipeline.mergeRequestId === null ? await autoMergeCandidates(env.db, pipeline.projectId, pipeline.ref)
    : own && own.state === 'opened' && own.merge_when_pipeline_succeeds === 1 ? [own] : [];
  for (const mr of candidates) {
    const [diff] = await latestDiffsOf(env.db, [mr.id]);
    if (!diff || diff.head_commit_sha !== pipeline.sha || mr.merge_user_id === null) continue;
    const project = await findProjectById(env.db, mr.project_id);
    const [user] = await findUsersByIds(env.db, [mr.merge_user_id]);
    if (!project || !user) continue;
    const skippedRefused = project.allow_merge_on_skipped_pipeline !== 1 && project.only_allow_merge_if_pipeline_succeeds === 1;
    if (pipeline.status === 'skipped' && skippedRefused) continue;
    const o = mr.merge_params ? JSON.parse(mr.merge_params) as MergeOptions : {};
    const result = await acceptMergeRequest(env, project, mr, user, o, () => {});
    if (!result.ok) {
      await updateMergeRequestIf(env.db, mr.id, { state: 'opened' }, {
        merge_when_pipeline_succeeds: 0, merge_error: result.reason === 'sha_mismatch' ? 'SHA does not match HEAD of source branch'
          : 'Merge request is not mergeable',
      });
    }
  }
}

/** The rebase job: replays the source onto the target head and moves the source branch. */
export async function rebaseMergeRequest(env: CiEnv, mergeRequestId: number, userId: number): Promise<void> {
  const { db } = env;
  const mr = await findMergeRequestById(db, mergeRequestId);
  if (!mr) return;
  const finish = (error: string | null) => updateMergeRequestRow(db, mr.id, { rebase_in_progress: 0, merge_error: error });
  const project = await findProjectById(db, mr.project_id);
  const [user] = await findUsersByIds(db, [userId]);
  if (!project || !user || mr.state !== 'opened') return void await finish(null);
  const repo = projectRepository(env.storages, project);
  const fork = isForkRequest(mr);
  // A fork's branch is rebased from its head fetched into the target, where the target's commits are.
  if (fork && !await syncForkSourceHead(db, env.storages, mr, project)) {
    return void await finish('Rebase failed: Source branch or target branch does not exist');
  }
  const [source, target] = await Promise.all([
    refTarget(repo.gitDir, sourceRefOf(mr)), refTarget(repo.gitDir, `refs/heads/${mr.target_branch}`),
  ]);
  if (!source || !target) return void await finish('Rebase failed: Source branch or target branch does not exist');
  const base = await mergeBase(repo.gitDir, target, source);
  if (base === target) return void await finish(null);
  const committer = { name: user.name, email: user.commit_email || user.email };
  const rebased = base ? await rebaseCommits(repo.gitDir, base, source, target, committer) : null;
  if (!rebased) return void await finish('Rebase failed: Rebase locally, resolve all conflicts, then push the branch.');
  // The branch moves where it lives: the fork's repository gets the rebased commits first.
  const sourceProject = fork && mr.source_project_id !== null ? await findProjectById(db, mr.source_project_id) : project;
  if (!sourceProject) return void await finish('Rebase failed: Source branch or target branch does not exist');
  const sourceRepo = fork ? projectRepository(env.storages, sourceProject) : repo;
  if (fork) await fetchCommit(sourceRepo.gitDir, repo.gitDir, rebased);
  const update = { ref: `refs/heads/${mr.source_branch}`, before: source, after: rebased };
  const moved = await updateRefs(db, sourceRepo, [update]);
  if (!moved.ok) return void await finish('Rebase failed. Please rebase locally');
  await updateMergeRequestRow(db, mr.id, { rebase_commit_sha: rebased, rebase_in_progress: 0, merge_error: null });
  await afterRefUpdate(env, sourceProject, [update], user.id, () => {});
}

/** A rebase job given up: the request is no longer rebasing, and says why. */
export async function rebaseGaveUp(db: Kysely<DB>, mergeRequestId: number): Promise<void> {
  await updateMergeRequestRow(db, mergeRequestId, { rebase_in_progress: 0, merge_error: 'Rebase failed. Please rebase locally' });
}
