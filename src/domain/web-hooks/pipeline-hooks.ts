/**
 * Pipeline deliveries (the Service's PipelineHooksWorker after every status transition of a
 * pipeline, with Gitlab::DataBuilder::Pipeline): the pipeline, its merge request, user, project
 * (without the backward-compatible URLs), commit and latest jobs.
 */
import { activeIntegrations } from '../integrations/integrations.queries.ts';
import { executeEventIntegrations } from '../integrations/push-integrations.ts';
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { findPipeline } from '../pipelines/pipelines.queries.ts';
import { jobArtifacts, latestPipelineJobs } from '../jobs/jobs.queries.ts';
import type { CommitData } from '../pipelines/git-source.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { sealerFor } from '../ci-variables/encryption.ts';
import { enqueueHookEvent } from './hook-events.ts';
import { hookTime, projectHookAttrs, userHookAttrs, xmlschema } from './payloads.ts';
import { hooksHearing, mergeRequestForHook, pipelineVariableRows, runnersByIds } from './web-hooks.queries.ts';

/** detailed_status labels of the Service's Gitlab::Ci::Status classes. */
const STATUS_LABELS: Record<string, string> = {
  success: 'passed', failed: 'failed', running: 'running', pending: 'pending', canceled: 'canceled', skipped: 'skipped',
  created: 'created', manual: 'manual action', scheduled: 'delayed', preparing: 'preparing',
  waiting_for_resource: 'waiting for resource',
};

function secondsBetween(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  return (new Date(to).getTime() - new Date(from).getTime()) / 1000;
}

/** A job's `environment:` as the payload names it (name, action, tier), or null without one. */
export function environmentOf(job: BuildRow): { name: string; action: string; deployment_tier: string | null } | null {
  const env = (JSON.parse(job.options) as { environment?: { name: string; action?: string; deployment_tier?: string } | null }).environment;
  return env ? { name: env.name, action: env.action ?? 'start', deployment_tier: env.deployment_tier ?? null } : null;
}

function stageNames(jobs: BuildRow[]): string[] {
  const byIdx = new Map<number, string>();
  for (const j of [...jobs].sort((a, b) => a.stage_idx - b.stage_idx)) if (!byIdx.has(j.stage_idx)) byIdx.set(j.stage_idx, j.stage);
  return [...byIdx.values()];
}

export async function buildPipelineData(env: CiEnv, pipeline: PipelineRow): Promise<Record<string, unknown> | null> {
  const project = await findProjectById(env.db, pipeline.project_id);
  if (!project) return null;
  const jobs = (await latestPipelineJobs(env.db, pipeline.id)).filter((j) => j.type === 'build');
  const projectAttrs = await projectHookAttrs(env.db, env, project, false);
  const runners = await runnersByIds(env.db, [...new Set(jobs.map((j) => j.runner_id).filter((id): id is number => id !== null))]);
  const variableRows = await pipelineVariableRows(env.db, pipeline.id);
  const sealer = variableRows.length > 0 ? await sealerFor(env.dataDir) : null;
  const mr = pipeline.merge_request_id === null ? undefined : await mergeRequestForHook(env.db, pipeline.merge_request_id);
  const commit = JSON.parse(pipeline.commit_data) as Partial<CommitData>;
  const users = new Map<number, Awaited<ReturnType<typeof userHookAttrs>>>();
  const userOf = async (id: number | null) => {
    if (id === null) return null;
    if (!users.has(id)) users.set(id, await userHookAttrs(env.db, env, id));
    return users.get(id) ?? null;
  };
  const archives = new Map((await jobArtifacts(env.db, jobs.map((j) => j.id)))
    .filter((a) => a.file_type === 'archive').map((a) => [a.job_id, a]));
  const queued = jobs.map((j) => secondsBetween(j.queued_at, j.started_at)).filter((s): s is number => s !== null);
  const builds = [];
  for (const j of jobs) {
    const runner = j.runner_id === null ? undefined : runners.get(j.runner_id);
    builds.push({
      id: j.id, stage: j.stage, name: j.name, status: j.status, created_at: hookTime(j.created_at),
      started_at: hookTime(j.started_at), finished_at: hookTime(j.finished_at),
      duration: secondsBetween(j.started_at, j.finished_at), queued_duration: secondsBetween(j.queued_at, j.started_at),
      failure_reason: j.status === 'failed' ? j.failure_reason : null, when: j.run_when, manual: j.run_when === 'manual',
      allow_failure: j.allow_failure === 1, user: await userOf(j.user_id),
      runner: runner ? {
        id: runner.id, description: runner.description, runner_type: runner.runner_type, active: runner.active === 1,
        is_shared: runner.runner_type === 'instance_type', tags: runner.tag_list.split(/[\s,]+/).filter(Boolean),
      } : null,
      artifacts_file: { filename: archives.get(j.id)?.filename ?? null, size: archives.get(j.id)?.size ?? null },
      environment: environmentOf(j),
    });
  }
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pipeline.id, iid: pipeline.iid, ref: pipeline.ref, tag: pipeline.tag === 1, sha: pipeline.sha,
      before_sha: pipeline.before_sha, source: pipeline.source, status: pipeline.status,
      detailed_status: STATUS_LABELS[pipeline.status] ?? pipeline.status, stages: stageNames(jobs),
      created_at: hookTime(pipeline.created_at), finished_at: hookTime(pipeline.finished_at), duration: pipeline.duration,
      queued_duration: queued.length > 0 ? Math.min(...queued) : null,
      variables: variableRows.map((v) => ({ key: v.key, value: sealer!.open(v.encrypted_value) })),
      url: `${projectAttrs.web_url}/-/pipelines/${pipeline.id}`,
    },
    merge_request: mr ? {
      id: mr.id, iid: mr.iid, title: mr.title, source_branch: mr.source_branch, source_project_id: mr.source_project_id ?? mr.project_id,
      target_branch: mr.target_branch, target_project_id: mr.project_id, state: mr.state, merge_status: mr.merge_status,
      url: `${projectAttrs.web_url}/-/merge_requests/${mr.iid}`,
    } : null,
    user: await userOf(pipeline.user_id),
    project: projectAttrs,
    commit: commit.id ? {
      id: commit.id, message: commit.message ?? '', title: commit.title ?? '',
      timestamp: commit.authored_date ? xmlschema(commit.authored_date) : null,
      url: `${projectAttrs.web_url}/-/commit/${commit.id}`,
      author: { name: commit.author_name ?? '', email: commit.author_email ?? '' },
    } : null,
    builds,
  };
}

/** Queues a pipeline's deliveries after its status changed. */
export async function executePipelineHooks(env: CiEnv, pipelineId: number): Promise<void> {
  const pipeline = await findPipeline(env.db, pipelineId);
  if (!pipeline) return;
  const hooks = (await hooksHearing(env.db, pipeline.project_id, 'pipeline_events')).length > 0;
  // The project's integrations hear pipelines too (Ci::Pipeline#execute_hooks runs both).
  const integrations = (await activeIntegrations(env.db, pipeline.project_id)).some((row) => row.pipeline_events === 1);
  if (!hooks && !integrations) return;
  const data = await buildPipelineData(env, pipeline);
  if (!data) return;
  if (hooks) await enqueueHookEvent(env.db, { id: pipeline.project_id }, 'pipeline_events', data);
  if (integrations) await executeEventIntegrations(env.db, pipeline.project_id, 'pipeline_events', data);
}
