/**
 * POST /projects/:id/trigger/pipeline (Ci::PipelineTriggerService, 15.2): a trigger token of the
 * project creates a pipeline as the trigger's owner with source `trigger`; a CI job token of a
 * running job creates one as the job's user with source `pipeline` (a multi-project pipeline).
 * The variables given, and TRIGGER_PAYLOAD (a file variable with the request's parameters but
 * the token), are the pipeline's own variables.
 *
 * A token that belongs to neither, or a trigger of another project, is `404 Not Found`, so a
 * token does not reveal projects its holder cannot see.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import { nowIso } from '../clock.ts';
import { digest } from '../tokens/secret.ts';
import { findJobByTokenDigest } from '../jobs/jobs.queries.ts';
import { findUserById } from '../users/users.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { createPipeline } from '../pipelines/create-pipeline.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import { resolvePipelineVariables, type GivenVariable } from '../ci-variables/collect-variables.ts';
import { checkPipelineVariables } from '../ci-variables/pipeline-variables.ts';
import { findTriggerByDigest, touchTrigger } from './triggers.queries.ts';

export interface TriggerRequest {
  project: ProjectRow;
  /** Ids from the project's namespace up to the root (for the caller's access level). */
  lineage: number[];
  token: string;
  ref: string;
  variables: Record<string, string>;
}

export type TriggerResult =
  | { ok: true; pipeline: PipelineRow }
  | { ok: false; status: 404 }
  | { ok: false; status: 400; errors: Record<string, string[]> }
  | { ok: false; status: 401; message: string };

const PAYLOAD_KEY = 'TRIGGER_PAYLOAD';

async function create(env: CiEnv, r: TriggerRequest, userId: number, source: 'trigger' | 'pipeline'): Promise<TriggerResult> {
  const user = await findUserById(env.db, userId);
  if (!user) return { ok: false, status: 404 };
  const actor = await projectActor(env.db, user, r.project.id, r.lineage);
  if (!canOnProject(actor, 'read_project', r.project)) return { ok: false, status: 404 };
  // Ci::CreatePipelineService's own check on the user the pipeline runs as (create_pipeline).
  if (!canOnProject(actor, 'update_build', r.project)) {
    return { ok: false, status: 400, errors: { base: ['Insufficient permissions to create a new pipeline'] } };
  }
  const given: GivenVariable[] = Object.entries(r.variables).map(([key, value]) => ({ key, value }));
  const checked = checkPipelineVariables(given);
  if (!checked.ok) return { ok: false, status: 400, errors: { base: checked.errors } };
  const payload = JSON.stringify({ id: String(r.project.id), ref: r.ref, variables: r.variables });
  const own = [...checked.variables, { key: PAYLOAD_KEY, value: payload, variable_type: 'file' }];
  const variables = await resolvePipelineVariables(env.db, env.dataDir, r.project, r.ref, own);
  const result = await createPipeline(env, { project: r.project, ref: r.ref, userId, source, variables, pipelineVariables: own });
  if (!result.ok) return { ok: false, status: 400, errors: { base: [result.error] } };
  return { ok: true, pipeline: result.pipeline };
}

export async function triggerPipeline(env: CiEnv, r: TriggerRequest): Promise<TriggerResult> {
  const tokenDigest = digest(r.token);
  const trigger = await findTriggerByDigest(env.db, tokenDigest);
  if (trigger) {
    if (trigger.project_id !== r.project.id || trigger.owner_id === null) return { ok: false, status: 404 };
    const result = await create(env, r, trigger.owner_id, 'trigger');
    if (result.ok) await touchTrigger(env.db, trigger.id, nowIso());
    return result;
  }
  const job = await findJobByTokenDigest(env.db, tokenDigest);
  if (!job || job.user_id === null) return { ok: false, status: 404 };
  // Ci::AuthJobFinder: a job token authenticates only while its job runs.
  if (job.status !== 'running') return { ok: false, status: 401, message: 'Job is not running' };
  return create(env, r, job.user_id, 'pipeline');
}
