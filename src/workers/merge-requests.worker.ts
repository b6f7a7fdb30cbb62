/**
 * The merge request jobs: the merge status check queued after each push to a request's source or
 * target branch, its creation, retarget or reopen (domain/merge-requests/merge-status.ts), and the
 * rebase queued by PUT …/rebase.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { MERGE_STATUS_JOB } from '../domain/merge-requests/write-merge-request.ts';
import { checkMergeStatus } from '../domain/merge-requests/merge-status.ts';
import { processAutoMerge, rebaseGaveUp, rebaseMergeRequest, REBASE_JOB } from '../domain/merge-requests/mr-actions.ts';
import { onPipelineCompleted } from '../domain/pipelines/pipeline-hooks.ts';
import type { CiEnv } from '../domain/pipelines/ci-env.ts';

export function registerMergeRequestJobs(queue: JobQueue, deps: { db: Kysely<DB>; shards: StorageShard[]; env: CiEnv }): void {
  queue.registerHandler(MERGE_STATUS_JOB, (p: { mergeRequestId: number }) => checkMergeStatus(deps, p.mergeRequestId), { maxAttempts: 3 });
  const rebase = (p: { mergeRequestId: number; userId: number }) => rebaseMergeRequest(deps.env, p.mergeRequestId, p.userId);
  queue.registerHandler(REBASE_JOB, rebase, {
    maxAttempts: 1, onGiveUp: (p: { mergeRequestId: number }) => rebaseGaveUp(deps.db, p.mergeRequestId),
  });
  // Merge when pipeline succeeds: the pipeline engine tells when a pipeline finished.
  onPipelineCompleted('merge-requests.auto-merge', processAutoMerge);
}
