/**
 * What users do to jobs through the API (spec, job transitions table): cancel, retry, play, erase.
 * Each returns the job to present, or the reason it cannot be done, which the route maps to the
 * Service's status and message (reference §3.1). The engine then processes the pipeline, since a
 * canceled or newly pending job changes what later stages do.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import type { Variable } from '../ci-config/ci-config.ts';
import { nowIso } from '../clock.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { processPipeline } from '../pipelines/process-pipeline.ts';
import { applyJobEvent, deleteArtifactsOf, findJob, jobArtifacts, updateJob } from './jobs.queries.ts';
import { isCompleted, isRetryable } from './state-machine.ts';
import { artifactRelPath, removeDir, removeFile, traceRelPath } from './job-files.ts';
import path from 'node:path';
import { deploymentForRetry } from '../deployments/deployment-sync.ts';

/** Cancels what can be canceled; anything else is left as it is (a silent no-op, reference §3.1). */
export async function cancelJob(env: CiEnv, job: BuildRow): Promise<BuildRow> {
  // finished_at stays null after a cancel (spec, Job: "finished_at is also null after cancel").
  const canceled = await applyJobEvent(env.db, job, 'cancel');
  if (canceled) await processPipeline(env, job.pipeline_id);
  return (await findJob(env.db, job.id))!;
}

export type RetryResult = { ok: true; job: BuildRow } | { ok: false };

/**
 * A new job cloned from a finished one, pending at once (Ci::RetryJobService); the old one is
 * marked retried, and skipped jobs of later stages become created again, in one transaction.
 */
async function cloneAsPending(env: CiEnv, job: BuildRow, userId: number, jobVariables: Variable[] | null): Promise<BuildRow | null> {
  const now = nowIso();
  const created = await env.db.transaction().execute(async (trx) => {
    const marked = await trx.updateTable('ci_builds').set({ retried: 1, updated_at: now })
      .where('id', '=', job.id).where('retried', '=', 0).where('status', '=', job.status).executeTakeFirst();
    if (Number(marked.numUpdatedRows) !== 1) return null;
    const { id: _id, ...rest } = job;
    const clone = await trx.insertInto('ci_builds').values({
      ...rest, status: 'pending', user_id: userId, runner_id: null, token_digest: null, failure_reason: null, retried: 0,
      trace_size: 0, job_variables: jobVariables ? JSON.stringify(jobVariables) : job.job_variables,
      created_at: now, updated_at: now, queued_at: now, started_at: null, finished_at: null, erased_at: null, artifacts_expire_at: null,
    }).returningAll().executeTakeFirstOrThrow();
    await deploymentForRetry(trx, job.id, clone);
    await trx.updateTable('ci_builds').set({ status: 'created', updated_at: now })
      .where(
        'pipeline_id', '=', job.pipeline_id,
      ).where('retried', '=', 0).where('stage_idx', '>', job.stage_idx).where('status', '=', 'skipped')
      .execute();
    return clone;
  });
  if (created) await processPipeline(env, job.pipeline_id);
  return created ? (await findJob(env.db, created.id))! : null;
}

export async function retryJob(env: CiEnv, job: BuildRow, userId: number): Promise<RetryResult> {
  if (job.type !== 'build' || !isRetryable(job.status) || job.retried) return { ok: false };
  const clone = await cloneAsPending(env, job, userId, null);
  return clone ? { ok: true, job: clone } : { ok: false };
}

/**
 * Plays a manual job (Ci::PlayBuildService): from `manual` it becomes pending with the given
 * variables; a manual job that already ran is retried and queued (Ci::Build#playable?).
 */
export async function playJob(env: CiEnv, job: BuildRow, userId: number, variables: Variable[]): Promise<RetryResult> {
  if (job.run_when !== 'manual' || job.retried) return { ok: false };
  if (job.status === 'manual') {
    const played = await applyJobEvent(env.db, job, 'enqueue', {
      queued_at: nowIso(), user_id: userId, job_variables: JSON.stringify(variables),
    });
    if (!played) return { ok: false };
    await processPipeline(env, job.pipeline_id);
    return { ok: true, job: (await findJob(env.db, job.id))! };
  }
  if (job.type === 'build' && isRetryable(job.status)) {
    const clone = await cloneAsPending(env, job, userId, variables);
    return clone ? { ok: true, job: clone } : { ok: false };
  }
  return { ok: false };
}

/** A finished build with a log or artifacts may be erased (Ci::Build#erasable?). */
export async function isErasable(env: CiEnv, job: BuildRow): Promise<boolean> {
  if (job.type !== 'build' || !isCompleted(job.status)) return false;
  return job.trace_size > 0 || (await jobArtifacts(env.db, [job.id])).length > 0;
}

/** Removes the job's artifacts and log (rows in one transaction, then the files). */
export async function eraseJob(env: CiEnv, job: BuildRow, _userId: number): Promise<BuildRow> {
  const now = nowIso();
  await env.db.transaction().execute(async (trx) => {
    await deleteArtifactsOf(trx, job.id);
    await updateJob(trx, job.id, { erased_at: now, trace_size: 0, artifacts_expire_at: null });
  });
  await removeFile(path.join(env.dataDir, traceRelPath(job)));
  await removeDir(path.dirname(path.join(env.dataDir, artifactRelPath(job, 'archive'))));
  return (await findJob(env.db, job.id))!;
}
