/**
 * The rows of a new pipeline, from the CI configuration at a ref (Ci::CreatePipelineService):
 * resolves the ref to its commit, reads and checks the configuration (and its local includes) at
 * that commit, reads the commit's metadata, and inserts the pipeline and all its jobs in one
 * transaction. Failures come back as the Service's base error texts. The engine is not started
 * here: create-pipeline.ts does that for callers, while bridges.ts (run by the engine) makes
 * downstream pipelines with these rows alone, so the engine never imports its own caller.
 */
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import type { Transaction } from 'kysely';
import { runGit } from '../repositories/git-command.ts';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { JobConfig, PipelineConfig, Variable } from '../ci-config/ci-config.ts';
import { ConfigError } from '../ci-config/config-error.ts';
import { loadCiConfig, selectJobs } from '../ci-config/parse-ci-config.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { BLANK_SHA, readCommit, readFileAt, resolveRef, type CommitData } from './git-source.ts';
import { insertPipelineWithJobs, type NewJob } from './pipelines.queries.ts';
import type { CiEnv } from './ci-env.ts';
import { storePipelineVariables } from '../ci-variables/pipeline-variables.ts';
import type { GivenVariable } from '../ci-variables/collect-variables.ts';
import { createPipelineEnvironments, expandJobEnvironments } from '../environments/pipeline-environments.ts';
import { creationVariables, includeSources, projectFullPath, selectContext } from './pipeline-context.ts';

export const CI_CONFIG_PATH = '.gitlab-ci.yml';

/** Where a pipeline comes from (the Service's Ci::Pipeline sources). */
export const PIPELINE_SOURCES = [
  'push', 'web', 'trigger', 'schedule', 'api', 'external', 'pipeline', 'chat', 'webide', 'merge_request_event',
  'external_pull_request_event', 'parent_pipeline', 'ondemand_dast_scan', 'ondemand_dast_validation',
] as const;

export interface CreatePipelineInput {
  project: ProjectRow;
  ref: string;
  userId: number | null;
  /** push, web, api, trigger, schedule, pipeline, parent_pipeline, merge_request_event … */
  source: string;
  /** A child pipeline's configuration file; `.gitlab-ci.yml` otherwise. */
  configPath?: string;
  /** Downstream pipelines: the bridge that creates them, linked in the same transaction. */
  upstreamBridgeId?: number;
  /** Child pipelines run at their parent's commit, not wherever the ref has moved since. */
  at?: { sha: string; tag: boolean };
  /**
   * Variables the caller resolved (settings, pipeline, trigger variables): `rules:if`,
   * `workflow:rules` and `$VAR` expansion see them above the predefined and configured ones.
   */
  variables?: Variable[];
  /** Push pipelines: the ref's commit before the push (compared with by `changes:`). */
  beforeSha?: string;
  /** Push pipelines: a configuration error still creates the pipeline, failed, with yaml_errors. */
  persistConfigErrors?: boolean;
  /** Child pipelines from `trigger:include` entries: the configuration is these includes. */
  includes?: unknown[];
  /** Variables given to this pipeline (API, trigger): stored with it, sealed (ci-variables/pipeline-variables.ts). */
  pipelineVariables?: GivenVariable[];
  /** Merge request pipelines (source merge_request_event): the request they run for. */
  mergeRequestId?: number;
  /** Pipelines a schedule runs (source schedule): the schedule, so it lists them and its variables reach the jobs. */
  pipelineScheduleId?: number;
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
      services: job.services, cache: job.cache, dependencies: job.dependencies, retry: job.retry,
      interruptible: job.interruptible, coverage: job.coverage, environment: job.environment, release: job.release,
      resource_group: job.resourceGroup, allow_failure_exit_codes: job.allowFailureExitCodes, start_in: job.startIn,
      node: job.node, needs: job.needsDetail, ...(job.idTokens ? { id_tokens: job.idTokens } : {}),
    }),
    yaml_variables: JSON.stringify(job.variables),
    job_variables: '[]',
    tag_list: job.tags.join(' '),
    needs: job.needs === null ? null : JSON.stringify(job.needs),
    // A job without `timeout:` runs as long as its project's build_timeout allows.
    timeout: job.timeout ?? input.project.build_timeout,
    downstream_pipeline_id: null,
    queued_at: null,
    started_at: null,
    finished_at: null,
    erased_at: null,
    artifacts_expire_at: null,
  };
}

interface Resolved { sha: string; tag: boolean }

/** Inserts the pipeline and its jobs in one transaction, linking the upstream bridge when there is one. */
async function insert(
  env: CiEnv, input: CreatePipelineInput, resolved: Resolved, config: PipelineConfig | null,
  commitData: string, yamlError: string | null,
): Promise<PipelineRow> {
  return env.db.transaction().execute(async (trx: Transaction<DB>) => {
    const now = new Date().toISOString();
    const pipeline = await insertPipelineWithJobs(trx, {
      project_id: input.project.id, ref: input.ref, tag: resolved.tag ? 1 : 0, sha: resolved.sha, before_sha: input.beforeSha ?? BLANK_SHA,
      source: input.source, status: yamlError === null ? 'created' : 'failed', user_id: input.userId,
      upstream_bridge_id: input.upstreamBridgeId ?? null, merge_request_id: input.mergeRequestId ?? null,
      pipeline_schedule_id: input.pipelineScheduleId ?? null,
      name: config?.name ?? null, auto_cancel_on_new_commit: config?.autoCancel.onNewCommit ?? null,
      auto_cancel_on_job_failure: config?.autoCancel.onJobFailure ?? null,
      config_path: input.configPath ?? CI_CONFIG_PATH, commit_data: commitData,
      started_at: null, finished_at: yamlError === null ? null : now, yaml_errors: yamlError,
    }, config === null ? [] : config.jobs.map((j) => jobRow(env, input, input.ref, resolved.tag, j)));
    await storePipelineVariables(trx, env.dataDir, pipeline.id, input.pipelineVariables);
    await createPipelineEnvironments(trx, pipeline);
    if (input.upstreamBridgeId !== undefined) {
      await trx.updateTable('ci_builds').set({ downstream_pipeline_id: pipeline.id }).where('id', '=', input.upstreamBridgeId).execute();
    }
    return pipeline;
  });
}

/** Reads and selects the configuration at the pipeline's commit; a ConfigError is the Service's base error. */
async function configFor(
  env: CiEnv, input: CreatePipelineInput, gitDir: string, resolved: Resolved, text: string,
  commit: CommitData,
): Promise<PipelineConfig> {
  const fullPath = await projectFullPath(env, input.project);
  const ctxInput = {
    project: input.project, userId: input.userId, ref: input.ref, tag: resolved.tag, sha: resolved.sha,
    beforeSha: input.beforeSha ?? BLANK_SHA, source: input.source, configPath: input.configPath ?? CI_CONFIG_PATH,
    commit, variables: input.variables ?? [], mergeRequestId: input.mergeRequestId ?? null,
  };
  const predefined = await creationVariables(env, ctxInput, fullPath);
  const sources = includeSources(env, gitDir, resolved.sha, input.userId);
  const select = selectContext(env, gitDir, ctxInput, fullPath, predefined, sources.tree);
  // include:rules:changes compares as the jobs' rules:changes do.
  const loaded = await loadCiConfig(text, { ...sources, changedPaths: select.changedPaths }, predefined);
  const config = await selectJobs(loaded, select);
  expandJobEnvironments(config, predefined);
  return config;
}

/**
 * `cache:key:files`: the key is the digest of the last commits that changed those files
 * (Seed::Build::Cache), with the prefix before it; `default` when none of them exists.
 */
async function resolveCacheKeys(gitDir: string, sha: string, config: PipelineConfig): Promise<void> {
  for (const job of config.jobs) {
    for (const c of job.cache) {
      if (typeof c.key === 'string') continue;
      const ids: string[] = [];
      for (const file of c.key.files) {
        if (file.length > 4096 || /[\x00-\x1f\x7f]/.test(file)) continue;
        const { stdout, exitCode } = await runGit(['log', '-1', '--format=%H', sha, '--', file], { gitDir, okExitCodes: [128] });
        if (exitCode === 0 && stdout.trim() !== '') ids.push(stdout.trim());
      }
      const digest = ids.length === 0 ? 'default' : createHash('sha1').update(ids.join('')).digest('hex');
      (c as typeof c & { resolvedKey: string }).resolvedKey = c.key.prefix ? `${c.key.prefix}-${digest}` : digest;
    }
  }
}

/** Everything up to the insert; the engine is not started (callers decide when). */
export async function createPipelineRows(env: CiEnv, input: CreatePipelineInput): Promise<CreatePipelineResult> {
  const gitDir = projectGitDir(env, input.project);
  const resolved = input.at ?? await resolveRef(gitDir, input.ref);
  if (!resolved) return { ok: false, error: 'Reference not found' };
  const configPath = input.configPath ?? CI_CONFIG_PATH;
  // Both reads at once: each is a git process, and their start-up is most of their cost.
  const [text, commit] = await Promise.all([
    input.includes ? Promise.resolve(YAML.stringify({ include: input.includes })) : readFileAt(gitDir, resolved.sha, configPath),
    readCommit(gitDir, resolved.sha),
  ]);
  if (text === null) return { ok: false, error: 'Missing CI config file' };
  let config: PipelineConfig;
  try {
    config = await configFor(env, input, gitDir, resolved, text, commit);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // The Service keeps a failed pipeline for a push whose configuration is invalid, but not
    // for one filtered out by workflow:rules or left without jobs.
    const persisted = input.persistConfigErrors && !/^(Pipeline filtered out by workflow rules|No stages \/ jobs)/.test(err.message);
    if (!persisted) return { ok: false, error: err.message };
    const pipeline = await insert(env, input, resolved, null, JSON.stringify(commit), err.message);
    return { ok: true, pipeline };
  }
  await resolveCacheKeys(gitDir, resolved.sha, config);
  const pipeline = await insert(env, input, resolved, config, JSON.stringify(commit), null);
  return { ok: true, pipeline };
}
