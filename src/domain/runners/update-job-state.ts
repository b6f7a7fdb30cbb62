/**
 * A runner reports on its job (PUT /jobs/:id, Ci::UpdateBuildStateService): `running` is a
 * heartbeat; `success` and `failed` end the job (failed with the runner's failure_reason, e.g.
 * script_failure), and the engine moves the pipeline on.
 *
 * A failed job is retried when its `retry:` allows (Ci::Build#retryable? / auto_retry: fewer
 * retries so far than `max`, and the failure reason in `when`, `always` matching any), and an
 * exit code listed in `allow_failure:exit_codes` makes the failure allowed. Coverage is read from
 * the trace with the job's `coverage:` regex when it ends.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import type { RetryConfig } from '../ci-config/ci-config.ts';
import { nowIso } from '../clock.ts';
import { applyJobEvent, findJob, updateJob } from '../jobs/jobs.queries.ts';
import { retryJob } from '../jobs/job-actions.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { processPipeline } from '../pipelines/process-pipeline.ts';
import { countRetries } from '../pipelines/pipelines.queries.ts';
import { readCoverage } from './coverage.ts';

/** Ci::Build.failure_reasons of the Service (15.x), the values a runner may send. */
export const FAILURE_REASONS = [
  'unknown_failure', 'script_failure', 'api_failure', 'stuck_or_timeout_failure', 'runner_system_failure',
  'missing_dependency_failure', 'runner_unsupported', 'stale_schedule', 'job_execution_timeout', 'archived_failure',
  'unmet_prerequisites', 'scheduler_failure', 'data_integrity_failure', 'forward_deployment_failure', 'user_blocked',
  'project_deleted', 'ci_quota_exceeded', 'pipeline_loop_detected', 'no_matching_runner', 'trace_size_exceeded',
  'builds_disabled', 'environment_creation_failure', 'deployment_rejected', 'failed_outdated_deployment_job',
  'protected_environment_failure', 'insufficient_bridge_permissions', 'downstream_bridge_project_not_found',
  'invalid_bridge_trigger', 'upstream_bridge_project_not_found', 'bridge_pipeline_is_child_pipeline',
  'downstream_pipeline_creation_failed', 'secrets_provider_not_found', 'reached_max_descendant_pipelines_depth',
  'ip_restriction_failure',
] as const;

export const RUNNER_STATES = ['running', 'success', 'failed'] as const;

interface EndOptions {
  retry?: RetryConfig | null;
  allow_failure_exit_codes?: number[] | null;
  coverage?: string | null;
}

/** Whether a failed job is retried by the engine (Ci::Build#auto_retry_allowed?). */
export async function autoRetryWanted(env: CiEnv, job: BuildRow, reason: string): Promise<boolean> {
  const retry = (JSON.parse(job.options) as EndOptions).retry;
  if (!retry || retry.max <= 0 || job.type !== 'build') return false;
  if (!retry.when.includes('always') && !retry.when.includes(reason)) return false;
  return await countRetries(env.db, job.pipeline_id, job.name) < retry.max;
}

export async function updateJobState(
  env: CiEnv, job: BuildRow, state: (typeof RUNNER_STATES)[number], failureReason: string | undefined,
  exitCode?: number,
): Promise<BuildRow> {
  if (state === 'running') {
    await updateJob(env.db, job.id, {});
    return job;
  }
  const options = JSON.parse(job.options) as EndOptions;
  const coverage = options.coverage ? await readCoverage(env, job, options.coverage) : null;
  const reason = failureReason ?? 'unknown_failure';
  const allowedByExitCode = state === 'failed' && exitCode !== undefined && (options.allow_failure_exit_codes ?? []).includes(exitCode);
  const ended = state === 'success'
    ? await applyJobEvent(env.db, job, 'succeed', { finished_at: nowIso(), coverage })
    : await applyJobEvent(env.db, job, 'drop', {
      finished_at: nowIso(), failure_reason: reason, coverage,
      ...(allowedByExitCode ? { allow_failure: 1 } : {}),
    });
  if (ended && state === 'failed' && !allowedByExitCode && await autoRetryWanted(env, ended, reason)) {
    // The retry clones the job as pending and processes the pipeline itself.
    const retried = await retryJob(env, ended, ended.user_id ?? 0);
    if (retried.ok) return (await findJob(env.db, job.id))!;
  }
  if (ended) await processPipeline(env, job.pipeline_id);
  return (await findJob(env.db, job.id))!;
}
