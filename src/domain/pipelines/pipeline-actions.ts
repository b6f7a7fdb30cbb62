/**
 * What users do to a whole pipeline (lib/api/ci/pipelines.rb, 15.2): cancel, retry, delete. Each is
 * built on the job transitions (jobs/state-machine.ts) applied as conditional UPDATEs
 * (`… WHERE status = <the status read>`), so a runner finishing a job at the same moment either
 * wins (and the job keeps its outcome) or loses (and the job is canceled): no transition is lost.
 * The engine then recomputes the pipeline's status from its jobs.
 *
 * The GraphQL mutations (pipelineCancel, pipelineRetry, pipelineDestroy) call these as well.
 */
import path from 'node:path';
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import { applyJobEvent, findJob, latestPipelineJobs } from '../jobs/jobs.queries.ts';
import { isRetryable } from '../jobs/state-machine.ts';
import { artifactRelPath, removeDir, removeFile, traceRelPath } from '../jobs/job-files.ts';
import type { CiEnv } from './ci-env.ts';
import { findPipeline } from './pipelines.queries.ts';
import { processPipeline } from './process-pipeline.ts';
import { deletePersistentRef } from './persistent-ref.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { childPipelines, cloneForRetry, deletePipelineRows, pipelineJobFiles, resetSkippedJobs } from './pipeline-actions.queries.ts';

/**
 * The statuses Ci::Pipeline#cancel_running cancels (Ci::HasStatus::CANCELABLE_STATUSES): manual
 * jobs are not among them and stay playable.
 */
const CANCELABLE = ['created', 'pending', 'running'];
/** Child pipelines nest at most this deep (the Service's limit on parent-child depth is 2). */
const MAX_DEPTH = 5;

/** Cancels one job, re-reading it once if it moved between the read and the UPDATE (retries: 1). */
async function cancelOne(env: CiEnv, job: BuildRow): Promise<void> {
  if (await applyJobEvent(env.db, job, 'cancel')) return;
  const fresh = await findJob(env.db, job.id);
  if (fresh && CANCELABLE.includes(fresh.status)) await applyJobEvent(env.db, fresh, 'cancel');
}

async function cancelTree(env: CiEnv, pipelineId: number, depth: number): Promise<void> {
  for (const job of await latestPipelineJobs(env.db, pipelineId)) {
    if (CANCELABLE.includes(job.status)) await cancelOne(env, job);
  }
  // Ci::Pipeline#cancel_running cascades to child pipelines (not to other projects' pipelines).
  if (depth < MAX_DEPTH) {
    for (const child of await childPipelines(env.db, pipelineId)) await cancelTree(env, child.id, depth + 1);
  }
  await processPipeline(env, pipelineId);
}

/**
 * Whether the pipeline has a job cancel would act on (Ci::Pipeline#cancelable?: any of its jobs
 * in a cancelable status). The GraphQL pipelineCancel answers "Pipeline is not cancelable"
 * otherwise; the REST route cancels regardless, as the Service's does.
 */
export async function isPipelineCancelable(env: CiEnv, pipeline: PipelineRow): Promise<boolean> {
  return hasCancelableJobs(await latestPipelineJobs(env.db, pipeline.id));
}

/** The same rule over a pipeline's latest jobs already loaded (GraphQL's Pipeline.cancelable). */
export function hasCancelableJobs(jobs: readonly Pick<BuildRow, 'status'>[]): boolean {
  return jobs.some((j) => CANCELABLE.includes(j.status));
}

/** Cancels every cancelable job of the pipeline and of its child pipelines; returns the pipeline as it now is. */
export async function cancelPipeline(env: CiEnv, pipeline: PipelineRow): Promise<PipelineRow> {
  await cancelTree(env, pipeline.id, 0);
  return (await findPipeline(env.db, pipeline.id)) ?? pipeline;
}

/**
 * Retries the pipeline's failed and canceled builds (Ci::RetryPipelineService): each is cloned as
 * `created` and marked retried, and skipped jobs become created again, all in one transaction;
 * the engine then queues what may run. Builds that were retried meanwhile are left to that retry.
 */
export async function retryPipeline(env: CiEnv, pipeline: PipelineRow, userId: number): Promise<PipelineRow> {
  const now = nowIso();
  const jobs = await latestPipelineJobs(env.db, pipeline.id);
  const retryable = jobs.filter((j) => j.type === 'build' && isRetryable(j.status) && j.status !== 'success');
  await env.db.transaction().execute(async (trx) => {
    for (const job of retryable) await cloneForRetry(trx, job, userId, now);
    await resetSkippedJobs(trx, pipeline.id, now);
  });
  await processPipeline(env, pipeline.id);
  return (await findPipeline(env.db, pipeline.id)) ?? pipeline;
}

/**
 * Deletes the pipeline (Ci::DestroyPipelineService): its running jobs are canceled first, so
 * their runners learn it on their next update; then the rows go in one transaction (jobs,
 * artifact rows and variables with them), then the jobs' logs and artifact files.
 */
export async function deletePipeline(env: CiEnv, pipeline: PipelineRow): Promise<boolean> {
  await cancelTree(env, pipeline.id, 0);
  const files = await pipelineJobFiles(env.db, pipeline.id);
  const deleted = await env.db.transaction().execute((trx) => deletePipelineRows(trx, pipeline));
  // A pipeline that was waiting (on a manual job, say) still had its ref; with the pipeline gone it serves no job.
  const project = await findProjectById(env.db, pipeline.project_id);
  if (deleted && project) await deletePersistentRef(env.db, env.storages, project, pipeline.id);
  for (const job of files) {
    await removeFile(path.join(env.dataDir, traceRelPath(job)));
    await removeDir(path.dirname(path.join(env.dataDir, artifactRelPath(job, 'archive'))));
  }
  return deleted;
}
