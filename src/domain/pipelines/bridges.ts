/**
 * Bridge jobs (Ci::Bridge, Ci::CreateDownstreamPipelineService): when a bridge's turn comes it
 * creates its downstream pipeline, a child pipeline of this project from a local file
 * (`trigger: include:`) or a pipeline of another project on its default branch or `branch:`
 * (`trigger: project:`), as the user who created the bridge. With `strategy: depend` the bridge
 * then mirrors the downstream pipeline's outcome; otherwise it succeeds once the downstream
 * pipeline exists (the Service's default). Failures end the bridge with the Service's reasons.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import type { TriggerConfig } from '../ci-config/ci-config.ts';
import { nowIso } from '../clock.ts';
import { applyJobEvent, findJob } from '../jobs/jobs.queries.ts';
import type { JobEvent } from '../jobs/state-machine.ts';
import { findProjectById, findProjectByIdOrPath } from '../projects/projects.queries.ts';
import { findUserById } from '../users/users.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { findPipeline } from './pipelines.queries.ts';
import { createPipelineRows, type CreatePipelineInput } from './create-pipeline-rows.ts';
import type { CiEnv } from './ci-env.ts';
import type { Variable } from '../ci-config/ci-config.ts';

export function triggerOf(job: BuildRow): TriggerConfig | null {
  return (JSON.parse(job.options) as { trigger?: TriggerConfig | null }).trigger ?? null;
}

type Target = { ok: true; input: CreatePipelineInput } | { ok: false; reason: string };

async function downstreamTarget(env: CiEnv, bridge: BuildRow, trigger: TriggerConfig): Promise<Target> {
  const upstream = (await findPipeline(env.db, bridge.pipeline_id))!;
  const project = await findProjectById(env.db, bridge.project_id);
  if (!project) return { ok: false, reason: 'project_deleted' };
  // The bridge's variables become the downstream pipeline's (trigger:forward:yaml_variables, on by default).
  const variables = trigger.forward?.yaml_variables === false ? [] : JSON.parse(bridge.yaml_variables) as Variable[];
  if (trigger.include || trigger.includes) {
    return {
      ok: true,
      input: {
        project, ref: upstream.ref, userId: bridge.user_id, source: 'parent_pipeline', configPath: trigger.include ?? '.gitlab-ci.yml',
        upstreamBridgeId: bridge.id, at: { sha: upstream.sha, tag: upstream.tag === 1 }, variables,
        ...(trigger.includes ? { includes: trigger.includes } : {}),
      },
    };
  }
  const target = await findProjectByIdOrPath(env.db, trigger.project ?? '');
  const user = bridge.user_id === null ? undefined : await findUserById(env.db, bridge.user_id);
  if (!target || !user) return { ok: false, reason: 'downstream_bridge_project_not_found' };
  const lineage = (await namespacePathsById(env.db, [target.namespace_id])).get(target.namespace_id)!.lineage;
  const actor = await projectActor(env.db, user, target.id, lineage);
  // Not even visible: the same answer as a missing project, so private names do not leak.
  if (!canOnProject(actor, 'read_project', target)) return { ok: false, reason: 'downstream_bridge_project_not_found' };
  // Creating a pipeline takes Developer (create_pipeline), as update_build does.
  if (!canOnProject(actor, 'update_build', target)) return { ok: false, reason: 'insufficient_bridge_permissions' };
  if (target.id === project.id) return { ok: false, reason: 'invalid_bridge_trigger' };
  const ref = trigger.branch ?? target.default_branch;
  if (!ref) return { ok: false, reason: 'downstream_pipeline_creation_failed' };
  return { ok: true, input: { project: target, ref, userId: bridge.user_id, source: 'pipeline', upstreamBridgeId: bridge.id, variables } };
}

/**
 * Starts a pending bridge: claims it (pending → running) so only one processor creates the
 * downstream pipeline, then creates it. Returns the pipelines to process next.
 */
export async function triggerDownstream(env: CiEnv, pending: BuildRow): Promise<{ changed: boolean; followUps: number[] }> {
  const bridge = await applyJobEvent(env.db, pending, 'run', { started_at: nowIso() });
  if (!bridge) return { changed: false, followUps: [] };
  const trigger = triggerOf(bridge);
  const target = trigger ? await downstreamTarget(env, bridge, trigger) : { ok: false as const, reason: 'invalid_bridge_trigger' };
  if (!target.ok) {
    await applyJobEvent(env.db, bridge, 'drop', { failure_reason: target.reason, finished_at: nowIso() });
    return { changed: true, followUps: [] };
  }
  const created = await createPipelineRows(env, target.input);
  if (!created.ok) {
    await applyJobEvent(env.db, bridge, 'drop', { failure_reason: 'downstream_pipeline_creation_failed', finished_at: nowIso() });
    return { changed: true, followUps: [] };
  }
  if (trigger?.strategy !== 'depend') {
    const running = { ...bridge, downstream_pipeline_id: created.pipeline.id };
    await applyJobEvent(env.db, running, 'succeed', { finished_at: nowIso() });
  }
  return { changed: true, followUps: [created.pipeline.id] };
}

const MIRROR: Record<string, { event: JobEvent; reason?: string }> = {
  success: { event: 'succeed' },
  // Nothing in the downstream pipeline failed; it simply had nothing to run.
  skipped: { event: 'succeed' },
  failed: { event: 'drop', reason: 'unknown_failure' },
  canceled: { event: 'cancel' },
};

/** After a downstream pipeline's status changed: a `depend` bridge takes its outcome. */
export async function mirrorDownstream(env: CiEnv, bridgeId: number, downstreamId: number): Promise<number[]> {
  const bridge = await findJob(env.db, bridgeId);
  const downstream = await findPipeline(env.db, downstreamId);
  if (!bridge || !downstream || bridge.status !== 'running' || triggerOf(bridge)?.strategy !== 'depend') return [];
  const m = MIRROR[downstream.status];
  if (!m) return [];
  const set = { ...(m.event === 'cancel' ? {} : { finished_at: nowIso() }), ...(m.reason ? { failure_reason: m.reason } : {}) };
  const updated = await applyJobEvent(env.db, bridge, m.event, set);
  return updated ? [bridge.pipeline_id] : [];
}
