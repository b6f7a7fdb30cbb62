/**
 * `.gitlab-ci.yml` → the jobs of one pipeline, in the order of the Service's Gitlab::Ci::Config
 * and Ci::CreatePipelineService, with their validation messages (the API returns them as
 * `{"message":{"base":[…]}}`):
 *
 *   load (load-yaml.ts) → spec:inputs (inputs.ts) → includes (includes.ts) → extends, !reference (normalise.ts)
 *   → keywords, default:, inherit: (job-entry.ts, defaults.ts) → parallel, matrix (expand.ts)
 *   → static checks of needs/dependencies           = loadCiConfig (what CI lint reports)
 *   → workflow:rules, rules, only/except (select.ts) → needs of the jobs left, empty stages
 *                                                   = selectJobs (what a pipeline gets)
 */
import { DEFAULT_STAGES, POST_STAGE, PRE_STAGE, type JobConfig, type PipelineConfig, type Variable } from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { loadYamlFile } from './load-yaml.ts';
import { interpolateInputs } from './inputs.ts';
import { resolveIncludes, type IncludeSources } from './includes.ts';
import { resolveExtends, resolveReferences } from './normalise.ts';
import { parseDefaults } from './defaults.ts';
import { jobEntry, type JobSpec } from './job-entry.ts';
import { checkJobCount, expandParallel } from './expand.ts';
import { globalVariables, parseWorkflow, pipelineName, selectJob, selectWorkflow, type SelectContext, type Workflow } from './select.ts';

const ROOT_KEYWORDS = new Set([
  'stages', 'types', 'variables', 'image', 'services', 'cache', 'before_script', 'after_script', 'default',
  'include', 'workflow',
]);
/** Jobs one pipeline may have after parallel and matrix expansion. */
export const MAX_JOBS = 2000;

export interface LoadedConfig {
  stages: string[];
  globals: Variable[];
  workflow: Workflow;
  /** Every job the configuration defines, expanded, before rules. */
  jobs: JobSpec[];
  /** The configuration after includes, extends and references (CI lint's merged_yaml). */
  merged: Hash;
  /** Warnings CI lint reports (Entry::Processable#add_warnings). */
  warnings: string[];
}

const RULES_WHEN_WARNING = 'may allow multiple pipelines to run for a single action due to `rules:when` clause with no `workflow:rules` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings';

/** A job whose last rule is a bare `when:` (not never) runs for every source unless workflow:rules limit them. */
function warningsOf(specs: JobSpec[], workflow: Workflow): string[] {
  if (workflow.rules !== null) return [];
  return specs.filter((j) => {
    const last = j.rules?.[j.rules.length - 1];
    return last !== undefined && Object.keys(last).length === 1 && last.when !== undefined && last.when !== 'never';
  }).map((j) => `jobs:${j.name} ${RULES_WHEN_WARNING}`);
}

function stagesOf(root: Hash): string[] {
  const given = root.stages ?? root.types;
  if (given === undefined || given === null) return [PRE_STAGE, ...DEFAULT_STAGES, POST_STAGE];
  if (!Array.isArray(given) || !given.every((s) => typeof s === 'string')) {
    throw new ConfigError('stages config should be an array of strings');
  }
  const list = (given as string[]).filter((s) => s !== PRE_STAGE && s !== POST_STAGE);
  return [PRE_STAGE, ...new Set(list), POST_STAGE];
}

/** YamlProcessor#validate_job_needs! and #validate_job_dependencies! on the whole configuration. */
function checkDependencies(jobs: JobSpec[]): void {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  for (const j of jobs) {
    for (const need of j.needsDetail ?? []) {
      const target = byName.get(need.name);
      if (!target) {
        if (need.optional) continue;
        throw new ConfigError(`${j.name} job: undefined need: ${need.name}`);
      }
      if (target.stageIdx > j.stageIdx) throw new ConfigError(`${j.name} job: need ${need.name} is not defined in current or prior stages`);
    }
    for (const dep of j.dependencies ?? []) {
      const target = byName.get(dep);
      if (!target) throw new ConfigError(`${j.name} job: undefined dependency: ${dep}`);
      if (target.stageIdx > j.stageIdx) throw new ConfigError(`${j.name} job: dependency ${dep} is not defined in current or prior stages`);
      if (j.needsDetail !== null && !j.needsDetail.some((n) => n.name === dep)) {
        throw new ConfigError(`${j.name} job: dependencies the ${dep} should be part of needs`);
      }
    }
  }
}

/** Everything that does not depend on the pipeline: the configuration as CI lint sees it. */
export async function loadCiConfig(text: string, sources: IncludeSources, vars: Map<string, string>): Promise<LoadedConfig> {
  const file = loadYamlFile(text);
  // The pipeline's own file takes no inputs: a header's inputs need defaults (Config#initialize).
  const loaded = interpolateInputs(file.header, file.content, undefined, vars);
  if (!isHash(loaded)) throw new ConfigError('Invalid configuration format');
  const { config: included } = await resolveIncludes(loaded, sources, vars);
  const root = resolveReferences(resolveExtends(included));
  const stages = stagesOf(root);
  const defs = parseDefaults(root);
  const globals = globalVariables(root);
  const workflow = parseWorkflow(root.workflow);
  const specs: JobSpec[] = [];
  for (const [key, value] of Object.entries(root)) {
    if (ROOT_KEYWORDS.has(key) || key.startsWith('.')) continue;
    if (!isHash(value)) throw new ConfigError(`jobs:${key} config should be a hash`);
    specs.push(jobEntry(key, value, stages, defs, globals));
  }
  if (specs.length === 0) throw new ConfigError('jobs config should contain at least one visible job');
  const jobs = expandParallel(specs, MAX_JOBS);
  checkJobCount(jobs.length, MAX_JOBS);
  checkDependencies(jobs);
  return { stages, globals, workflow, jobs, merged: root, warnings: warningsOf(specs, workflow) };
}

export const WORKFLOW_FILTERED = 'Pipeline filtered out by workflow rules.';
export const NO_JOBS = 'No stages / jobs for this pipeline.';

function strip(job: JobSpec): JobConfig {
  const {
    rules: _r, only: _o, except: _e, parallel: _p, whenGiven: _w, allowFailureGiven: _a, ownVariables: _v,
    inheritsVariable: _i, ...rest
  } = job;
  return rest;
}

/** The jobs this pipeline has: workflow, then each job's rules or only/except, then needs. */
export async function selectJobs(config: LoadedConfig, ctx: SelectContext): Promise<PipelineConfig> {
  const workflow = await selectWorkflow(config.workflow, config.globals, ctx);
  if (workflow === null) throw new ConfigError(WORKFLOW_FILTERED);
  const extra = workflow.variables;
  // workflow:rules:variables override the global variables every job inherits.
  const extraKeys = new Set(extra.map((v) => v.key));
  const globals = [...config.globals.filter((g) => !extraKeys.has(g.key)), ...extra];
  const kept: JobSpec[] = [];
  for (const job of config.jobs) {
    const ownKeys = new Set(job.ownVariables.map((v) => v.key));
    const withWorkflow = extra.length === 0 ? job : {
      ...job,
      variables: [...globals.filter((g) => job.inheritsVariable(g.key) && !ownKeys.has(g.key)), ...job.ownVariables],
    };
    const selected = await selectJob(withWorkflow, ctx, { workflowRules: config.workflow.rules !== null });
    if (selected.keep) kept.push(selected.job);
  }
  // A pipeline of only .pre/.post jobs is no pipeline (Chain::Populate).
  if (kept.every((j) => j.stage === PRE_STAGE || j.stage === POST_STAGE)) throw new ConfigError(NO_JOBS);
  const names = new Set(kept.map((j) => j.name));
  for (const j of kept) {
    for (const need of j.needsDetail ?? []) {
      if (!names.has(need.name) && !need.optional) {
        throw new ConfigError(`'${j.name}' job needs '${need.name}' job, but '${need.name}' is not in any previous stage`);
      }
    }
  }
  const jobs = kept.map((j) => {
    const needsDetail = j.needsDetail === null ? null : j.needsDetail.filter((n) => names.has(n.name));
    return strip({ ...j, needsDetail, needs: needsDetail === null ? null : needsDetail.map((n) => n.name) });
  });
  // Stages without jobs are dropped; stage_idx keeps the configured order.
  const used = new Set(jobs.map((j) => j.stage));
  return {
    stages: config.stages.filter((s) => used.has(s)), variables: globals, jobs,
    name: pipelineName(config.workflow, globals, ctx), autoCancel: workflow.autoCancel,
  };
}
