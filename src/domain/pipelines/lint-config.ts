/**
 * CI lint for a project (the Service's Gitlab::Ci::Lint behind POST and GET
 * /projects/:id/ci/lint): the configuration is read with the project's includes at a ref, and
 * answers `valid`, `errors`, `warnings`, `merged_yaml` and, when asked, the jobs. A static lint
 * lists every job with its only/except; a dry run (`dry_run`) creates the pipeline in memory
 * for the ref, so rules and workflow decide which jobs are listed, and nothing is stored.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { JobConfig } from '../ci-config/ci-config.ts';
import { ConfigError, isHash, Reference, type Hash } from '../ci-config/config-error.ts';
import { loadCiConfig, selectJobs } from '../ci-config/parse-ci-config.ts';
import { psychDump } from '../ci-config/psych-dump.ts';
import type { JobSpec } from '../ci-config/job-entry.ts';
import type { CiEnv } from './ci-env.ts';
import { projectGitDir } from './create-pipeline-rows.ts';
import { BLANK_SHA, readCommit, resolveRef, type CommitData } from './git-source.ts';
import { creationVariables, includeSources, projectFullPath, selectContext } from './pipeline-context.ts';

export interface LintJob {
  name: string;
  stage: string;
  before_script: string[];
  script: string[];
  after_script: string[];
  tag_list: string[];
  environment: string | null;
  when: string;
  allow_failure: boolean;
  only?: Record<string, unknown>;
  except?: Record<string, unknown>;
}

export interface LintResult {
  valid: boolean;
  errors: string[];
  warnings: string[];
  merged_yaml: string | null;
  jobs?: LintJob[];
}

function plain(value: unknown): unknown {
  if (value instanceof Reference) return value.path;
  if (Array.isArray(value)) return value.map(plain);
  if (isHash(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/**
 * The configuration as the Service's lint prints it (Gitlab::Ci::Config#metadata: the expanded
 * hash's `to_yaml`): after includes, extends and references, with `.pre` first and `.post` last
 * among the stages when `stages` (or the older `types`) is a list (Config::EdgeStagesInjector).
 */
export function mergedYaml(merged: Hash): string {
  const root = plain(merged) as Record<string, unknown>;
  const key = 'stages' in root ? 'stages' : 'types' in root ? 'types' : null;
  const stages = key ? root[key] : null;
  if (key && Array.isArray(stages)) {
    root[key] = [...(stages.includes('.pre') ? [] : ['.pre']), ...stages, ...(stages.includes('.post') ? [] : ['.post'])];
  }
  return psychDump(root);
}

function policy(spec: JobSpec['only']): Record<string, unknown> | undefined {
  if (!spec) return undefined;
  const out: Record<string, unknown> = {};
  if (spec.refs) out.refs = spec.refs;
  if (spec.variables) out.variables = spec.variables;
  if (spec.changes) out.changes = spec.changes;
  if (spec.kubernetes) out.kubernetes = 'active';
  return out;
}

function lintJob(job: JobConfig, spec?: JobSpec): LintJob {
  const out: LintJob = {
    name: job.name, stage: job.stage, before_script: job.beforeScript, script: job.script, after_script: job.afterScript,
    tag_list: job.tags, environment: job.environment?.name ?? null, when: job.when, allow_failure: job.allowFailure,
  };
  if (spec && spec.rules === null) {
    out.only = policy(spec.only) ?? { refs: ['branches', 'tags'] };
    const except = policy(spec.except);
    if (except) out.except = except;
  }
  return out;
}

const EMPTY_COMMIT: CommitData = {
  id: BLANK_SHA, short_id: BLANK_SHA.slice(0, 8), title: '', message: '', author_name: '', author_email: '', authored_date: '',
  committer_name: '', committer_email: '', committed_date: new Date().toISOString(), created_at: '', parent_ids: [],
};

export interface LintInput {
  project: ProjectRow;
  content: string;
  userId: number | null;
  /** Branch or tag the includes and the dry run are read at; the default branch otherwise. */
  ref?: string;
  dryRun: boolean;
  includeJobs: boolean;
}

export async function lintConfig(env: CiEnv, input: LintInput): Promise<LintResult> {
  const gitDir = projectGitDir(env, input.project);
  const ref = input.ref ?? input.project.default_branch ?? 'main';
  const resolved = await resolveRef(gitDir, ref);
  const sha = resolved?.sha ?? BLANK_SHA;
  const commit = resolved ? await readCommit(gitDir, sha) : EMPTY_COMMIT;
  const fullPath = await projectFullPath(env, input.project);
  const ctxInput = {
    project: input.project, userId: input.userId, ref, tag: resolved?.tag ?? false, sha, beforeSha: BLANK_SHA,
    source: 'push', configPath: '.gitlab-ci.yml', commit, variables: [],
  };
  const predefined = await creationVariables(env, ctxInput, fullPath);
  const sources = includeSources(env, gitDir, sha, input.userId);
  try {
    const loaded = await loadCiConfig(input.content, sources, predefined);
    const merged = mergedYaml(loaded.merged);
    let jobs: LintJob[] | undefined;
    if (input.dryRun) {
      if (!resolved) return { valid: false, errors: ['Reference not found'], warnings: [], merged_yaml: merged };
      const selected = await selectJobs(loaded, selectContext(env, gitDir, ctxInput, fullPath, predefined, sources.tree));
      jobs = selected.jobs.map((j) => lintJob(j));
    } else {
      jobs = loaded.jobs.map((j) => lintJob(j, j));
    }
    return { valid: true, errors: [], warnings: loaded.warnings, merged_yaml: merged, ...(input.includeJobs ? { jobs } : {}) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { valid: false, errors: [err.message], warnings: [], merged_yaml: null, ...(input.includeJobs ? { jobs: [] } : {}) };
  }
}

/**
 * Instance-level lint (the Service's POST /ci/lint, deprecated in 15.2 and still served):
 * Gitlab::Ci::Lint with no project — no predefined variables, no dry run, local includes refused
 * as having no project; project, remote and template includes read as for a pipeline of `userId`.
 */
export async function lintContent(
  env: CiEnv, input: { content: string; userId: number | null; includeJobs: boolean },
): Promise<LintResult> {
  const sources = { ...includeSources(env, '', BLANK_SHA, input.userId), projectless: true };
  try {
    const loaded = await loadCiConfig(input.content, sources, new Map());
    const jobs = loaded.jobs.map((j) => lintJob(j, j));
    return {
      valid: true, errors: [], warnings: loaded.warnings, merged_yaml: mergedYaml(loaded.merged), ...(input.includeJobs ? { jobs } : {}),
    };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { valid: false, errors: [err.message], warnings: [], merged_yaml: null, ...(input.includeJobs ? { jobs: [] } : {}) };
  }
}
