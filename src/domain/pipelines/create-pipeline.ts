/**
 * Creates a pipeline from the CI configuration at a ref (Ci::CreatePipelineService): resolves the
 * ref to its commit, reads and checks the configuration (and its local includes) at that commit,
 * reads the commit's metadata, inserts the pipeline and all its jobs in one transaction, then lets
 * the engine start the first stage. Failures come back as the Service's base error texts.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { JobConfig, PipelineConfig } from '../ci-config/ci-config.ts';
import { parseCiConfig } from '../ci-config/parse-ci-config.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { BLANK_SHA, readCommit, readFileAt, resolveRef } from './git-source.ts';
import { insertPipelineWithJobs, type NewJob } from './pipelines.queries.ts';
import type { CiEnv } from './ci-env.ts';
import { processPipeline } from './process-pipeline.ts';

export const CI_CONFIG_PATH = '.gitlab-ci.yml';

export interface CreatePipelineInput {
  project: ProjectRow;
  ref: string;
  userId: number | null;
  /** api, parent_pipeline, pipeline. */
  source: string;
  /** A child pipeline's configuration file; `.gitlab-ci.yml` otherwise. */
  configPath?: string;
  /** Downstream pipelines: the bridge that creates them, linked in the same transaction. */
  upstreamBridgeId?: number;
  /** Child pipelines run at their parent's commit, not wherever the ref has moved since. */
  at?: { sha: string; tag: boolean };
}

export type CreatePipelineResult = { ok: true; pipeline: PipelineRow } | { ok: false; error: string };

export function projectGitDir(env: CiEnv, project: ProjectRow): string {
  return repositoryPath(env.storages, project.repository_storage, project.disk_path);
}

function jobRow(env: CiEnv, input: CreatePipelineInput, ref: string, tag: boolean, job: JobConfig): NewJob {
  return {
    type: job.type,
    project_id: input.project.id,
    name: job.name,
    stage: job.stage,
    stage_idx: job.stageIdx,
    status: 'created',
    run_when: job.when,
    allow_failure: job.allowFailure ? 1 : 0,
    failure_reason: null,
    ref,
    tag: tag ? 1 : 0,
    user_id: input.userId,
    runner_id: null,
    token_digest: null,
    options: JSON.stringify({
      script: job.script, before_script: job.beforeScript, after_script: job.afterScript,
      image: job.image, artifacts: job.artifacts, trigger: job.trigger,
    }),
    yaml_variables: JSON.stringify(job.variables),
    job_variables: '[]',
    tag_list: job.tags.join(' '),
    needs: job.needs === null ? null : JSON.stringify(job.needs),
    timeout: job.timeout ?? env.jobTimeout,
    downstream_pipeline_id: null,
    queued_at: null,
    started_at: null,
    finished_at: null,
    erased_at: null,
    artifacts_expire_at: null,
  };
}

/** Inserts the pipeline and its jobs in one transaction, linking the upstream bridge when there is one. */
async function insert(env: CiEnv, input: CreatePipelineInput, resolved: { sha: string; tag: boolean }, config: PipelineConfig, commitData: string): Promise<PipelineRow> {
  return env.db.transaction().execute(async (trx: Transaction<DB>) => {
    const pipeline = await insertPipelineWithJobs(trx, {
      project_id: input.project.id, ref: input.ref, tag: resolved.tag ? 1 : 0, sha: resolved.sha, before_sha: BLANK_SHA,
      source: input.source, status: 'created', user_id: input.userId, upstream_bridge_id: input.upstreamBridgeId ?? null,
      config_path: input.configPath ?? CI_CONFIG_PATH, commit_data: commitData, started_at: null, finished_at: null,
    }, config.jobs.map((j) => jobRow(env, input, input.ref, resolved.tag, j)));
    if (input.upstreamBridgeId !== undefined) {
      await trx.updateTable('ci_builds').set({ downstream_pipeline_id: pipeline.id }).where('id', '=', input.upstreamBridgeId).execute();
    }
    return pipeline;
  });
}

/** Everything up to the insert; the engine is not started (callers decide when). */
export async function createPipelineRows(env: CiEnv, input: CreatePipelineInput): Promise<CreatePipelineResult> {
  const gitDir = projectGitDir(env, input.project);
  const resolved = input.at ?? await resolveRef(gitDir, input.ref);
  if (!resolved) return { ok: false, error: 'Reference not found' };
  const configPath = input.configPath ?? CI_CONFIG_PATH;
  const text = await readFileAt(gitDir, resolved.sha, configPath);
  if (text === null) return { ok: false, error: 'Missing CI config file' };
  const parsed = await parseCiConfig(text, (path) => readFileAt(gitDir, resolved.sha, path));
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const commit = await readCommit(gitDir, resolved.sha);
  const pipeline = await insert(env, input, resolved, parsed.config, JSON.stringify(commit));
  return { ok: true, pipeline };
}

export async function createPipeline(env: CiEnv, input: CreatePipelineInput): Promise<CreatePipelineResult> {
  const result = await createPipelineRows(env, input);
  if (!result.ok) return result;
  await processPipeline(env, result.pipeline.id);
  return result;
}
