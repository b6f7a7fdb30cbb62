/**
 * A runner reports on its job (PUT /jobs/:id, Ci::UpdateBuildStateService): `running` is a
 * heartbeat; `success` and `failed` end the job (failed with the runner's failure_reason, e.g.
 * script_failure), and the engine moves the pipeline on.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import { applyJobEvent, findJob, updateJob } from '../jobs/jobs.queries.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { processPipeline } from '../pipelines/process-pipeline.ts';

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

export async function updateJobState(env: CiEnv, job: BuildRow, state: (typeof RUNNER_STATES)[number], failureReason: string | undefined): Promise<BuildRow> {
  if (state === 'running') {
    await updateJob(env.db, job.id, {});
    return job;
  }
  const ended = state === 'success'
    ? await applyJobEvent(env.db, job, 'succeed', { finished_at: nowIso() })
    : await applyJobEvent(env.db, job, 'drop', { finished_at: nowIso(), failure_reason: failureReason ?? 'unknown_failure' });
  if (ended) await processPipeline(env, job.pipeline_id);
  return (await findJob(env.db, job.id))!;
}
