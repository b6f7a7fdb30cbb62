/**
 * Which jobs a pipeline has (the Service's Seed::Build#included? and Build::Rules / Build::Policy):
 *
 * - `rules:` — the first rule whose `if`, `changes` and `exists` all hold decides: `when: never`
 *   drops the job, any other `when` keeps it with that `when`, `allow_failure`, extra `variables`
 *   and `needs`; no rule holding drops the job.
 * - `only:`/`except:` — every `only` condition must hold and no `except` condition may; without
 *   either (and without rules) a job runs for branches and tags.
 * - `workflow:rules` — the same rules for the whole pipeline (`always` or `never`).
 *
 * Expressions see the predefined variables, the configuration's (global, then the job's), and
 * the variables the caller gave (settings, pipeline or trigger variables), which win.
 * `changes:` is true when nothing is known to compare with (a new branch, a pipeline not made
 * by a push), as in the Service.
 */
import picomatch from 'picomatch';
import type { AutoCancelConfig, Variable } from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { evaluateExpression, patternFromText, type Variables } from './expression.ts';
import { expandVariables } from './merge.ts';
import { parseAutoCancel, parseRules, WORKFLOW_RULE_KEYS, type JobSpec, type OnlySpec, type RuleSpec } from './job-entry.ts';
import { variables as parseVariables } from './job-keywords.ts';

/** Paths `exists:` compares before it answers true (Build::Rules::Rule::Clause::Exists). */
const MAX_EXISTS_COMPARISONS = 10_000;

export interface SelectContext {
  /** Predefined variables and the caller's, the caller's already winning. */
  predefined: Map<string, string>;
  /** The caller's variables (settings, pipeline, trigger): above the configuration's. */
  callerVariables: Variable[];
  source: string;
  ref: string;
  tag: boolean;
  projectFullPath: string;
  /** Paths changed by the push, or null when there is nothing to compare with. */
  changedPaths(compareTo?: string): Promise<string[] | null>;
  /** Every path of the pipeline's commit. */
  treePaths(): Promise<string[]>;
}

/**
 * The variables an expression sees; a configured value that names other variables (`$CI_PROJECT_DIR`)
 * is expanded once against the others, unknown names kept as written (Collection#sort_and_expand_all).
 */
export function variableMap(ctx: SelectContext, config: Variable[]): Map<string, string> {
  const map = new Map(ctx.predefined);
  for (const v of config) map.set(v.key, v.value);
  for (const v of ctx.callerVariables) map.set(v.key, v.value);
  const base = new Map(map);
  for (const v of config) {
    if (v.value.includes('$') && !ctx.callerVariables.some((c) => c.key === v.key)) map.set(v.key, expandVariables(v.value, base, true));
  }
  return map;
}

function globMatcher(patterns: string[], vars: Variables) {
  const expanded = patterns.map((p) => expandVariables(p, vars).replace(/^\/+/, ''));
  return picomatch(expanded, { dot: true });
}

async function changesHold(changes: NonNullable<RuleSpec['changes']>, vars: Variables, ctx: SelectContext): Promise<boolean> {
  const paths = await ctx.changedPaths(changes.compareTo === undefined ? undefined : expandVariables(changes.compareTo, vars));
  if (paths === null) return true;
  const isMatch = globMatcher(changes.paths, vars);
  return paths.some((p) => isMatch(p));
}

async function existsHold(globs: string[], vars: Variables, ctx: SelectContext): Promise<boolean> {
  const tree = await ctx.treePaths();
  const isMatch = globMatcher(globs, vars);
  let compared = 0;
  for (const p of tree) {
    if (isMatch(p)) return true;
    if (++compared * globs.length > MAX_EXISTS_COMPARISONS) return true;
  }
  return false;
}

export async function firstMatchingRule(rules: RuleSpec[], vars: Variables, ctx: SelectContext): Promise<RuleSpec | null> {
  for (const rule of rules) {
    if (rule.if !== undefined && !evaluateExpression(rule.if, vars)) continue;
    if (rule.changes !== undefined && !await changesHold(rule.changes, vars, ctx)) continue;
    if (rule.exists !== undefined && !await existsHold(rule.exists, vars, ctx)) continue;
    return rule;
  }
  return null;
}

const SOURCE_KEYWORDS: Record<string, (ctx: SelectContext) => boolean> = {
  branches: (c) => !c.tag && c.source !== 'merge_request_event' && c.source !== 'external_pull_request_event',
  tags: (c) => c.tag,
  api: (c) => c.source === 'api',
  external: (c) => c.source === 'external',
  pipelines: (c) => c.source === 'pipeline' || c.source === 'parent_pipeline',
  pushes: (c) => c.source === 'push',
  schedules: (c) => c.source === 'schedule',
  triggers: (c) => c.source === 'trigger',
  web: (c) => c.source === 'web',
  merge_requests: (c) => c.source === 'merge_request_event',
  chats: (c) => c.source === 'chat',
  external_pull_requests: (c) => c.source === 'external_pull_request_event',
};

function refMatches(pattern: string, ctx: SelectContext): boolean {
  const keyword = SOURCE_KEYWORDS[pattern];
  if (keyword) return keyword(ctx);
  let refPattern = pattern;
  const at = pattern.lastIndexOf('@');
  // `pattern@group/project`: only in that project (Build::Policy::Refs#matches_path?).
  if (at > 0 && !pattern.startsWith('/')) {
    if (pattern.slice(at + 1) !== ctx.projectFullPath) return false;
    refPattern = pattern.slice(0, at);
    if (SOURCE_KEYWORDS[refPattern]) return SOURCE_KEYWORDS[refPattern](ctx);
  }
  const re = refPattern.startsWith('/') ? patternFromText(refPattern) : null;
  if (re) return re.matcher(ctx.ref).find();
  return refPattern === ctx.ref;
}

/** The conditions of one `only` or `except` that hold, one boolean per condition given. */
async function conditions(spec: OnlySpec, vars: Variables, ctx: SelectContext): Promise<boolean[]> {
  const out: boolean[] = [];
  if (spec.refs !== null) out.push(spec.refs.some((r) => refMatches(r, ctx)));
  if (spec.variables !== null) out.push(spec.variables.some((e) => evaluateExpression(e, vars)));
  if (spec.changes !== null) out.push(await changesHold({ paths: spec.changes }, vars, ctx));
  // kiln has no Kubernetes integration: `kubernetes: active` never holds.
  if (spec.kubernetes) out.push(false);
  return out;
}

const DEFAULT_ONLY: OnlySpec = { refs: ['branches', 'tags'], variables: null, changes: null, kubernetes: false };

export type Selection = { keep: false } | { keep: true; job: JobSpec };

/** Whether a (parallel-expanded) job is in the pipeline, and how, given its pipeline variables. */
export async function selectJob(job: JobSpec, ctx: SelectContext, o: { workflowRules?: boolean } = {}): Promise<Selection> {
  const vars = variableMap(ctx, [...job.variables]);
  vars.set('CI_JOB_NAME', job.name);
  vars.set('CI_JOB_STAGE', job.stage);
  if (job.node) {
    vars.set('CI_NODE_INDEX', String(job.node.index));
    vars.set('CI_NODE_TOTAL', String(job.node.total));
  }
  for (const v of ctx.callerVariables) vars.set(v.key, v.value);
  if (job.rules !== null) {
    const rule = await firstMatchingRule(job.rules, vars, ctx);
    if (!rule || rule.when === 'never') return { keep: false };
    const when = rule.when ?? (job.whenGiven ? job.when : 'on_success');
    const extra = rule.variables ?? [];
    const extraKeys = new Set(extra.map((v) => v.key));
    return {
      keep: true,
      job: {
        ...job,
        when: (when === 'delayed' ? 'on_success' : when) as JobSpec['when'],
        // Manual jobs added by rules block the pipeline unless the rule or job says otherwise.
        allowFailure: rule.allowFailure ?? (job.allowFailureGiven ? job.allowFailure : false),
        variables: [...job.variables.filter((v) => !extraKeys.has(v.key)), ...extra],
        ...(rule.needs ? { needsDetail: rule.needs, needs: rule.needs.map((n) => n.name) } : {}),
        ...(rule.interruptible !== undefined ? { interruptible: rule.interruptible } : {}),
      },
    };
  }
  // Without only: (with or without except:), a job runs for branches and tags — unless the
  // configuration has workflow:rules, which drop that default (Entry::Processable#compose!), so
  // its jobs also run in the merge request pipelines the workflow lets through.
  const only = job.only ?? (o.workflowRules ? null : DEFAULT_ONLY);
  if (only && !(await conditions(only, vars, ctx)).every(Boolean)) return { keep: false };
  if (job.except && (await conditions(job.except, vars, ctx)).some(Boolean)) return { keep: false };
  return { keep: true, job };
}

export interface Workflow {
  rules: RuleSpec[] | null;
  name: string | null;
  autoCancel: AutoCancelConfig;
}

/** Entry::Workflow's name length (after 15.2). */
const MAX_WORKFLOW_NAME = 255;

const AUTO_CANCEL_AT = 'workflow:auto_cancel';

export function parseWorkflow(value: unknown): Workflow {
  if (value === undefined || value === null) return { rules: null, name: null, autoCancel: parseAutoCancel(undefined, AUTO_CANCEL_AT) };
  if (!isHash(value)) throw new ConfigError('workflow config should be a hash');
  const unknown = Object.keys(value).filter((k) => k !== 'rules' && k !== 'name' && k !== 'auto_cancel');
  if (unknown.length > 0) throw new ConfigError(`workflow config contains unknown keys: ${unknown.join(', ')}`);
  const rules = value.rules === undefined || value.rules === null
    ? null
    : parseRules(value.rules, 'workflow', ['always', 'never'], WORKFLOW_RULE_KEYS);
  if (value.name !== undefined && value.name !== null && typeof value.name !== 'string') {
    throw new ConfigError('workflow name should be a string');
  }
  if (typeof value.name === 'string' && value.name.length > MAX_WORKFLOW_NAME) {
    throw new ConfigError(`workflow name is too long (maximum is ${MAX_WORKFLOW_NAME} characters)`);
  }
  const name = typeof value.name === 'string' ? value.name : null;
  return { rules, name, autoCancel: parseAutoCancel(value.auto_cancel, AUTO_CANCEL_AT) };
}

/**
 * The pipeline's name (Chain::Metadata): workflow:name with the pipeline's variables expanded,
 * stripped, at most 255 characters; null when it ends up blank.
 */
export function pipelineName(workflow: Workflow, globals: Variable[], ctx: SelectContext): string | null {
  if (workflow.name === null) return null;
  const name = expandVariables(workflow.name, variableMap(ctx, globals)).trim().slice(0, MAX_WORKFLOW_NAME);
  return name === '' ? null : name;
}

/**
 * workflow:rules: null when the pipeline is filtered out, else the variables its rule adds and
 * the pipeline's auto-cancel settings: workflow:auto_cancel with the matching rule's
 * `auto_cancel` over it key by key (Chain::PopulateMetadata#set_auto_cancel merges the rule's
 * hash over the configuration's).
 */
export async function selectWorkflow(
  workflow: Workflow, globals: Variable[], ctx: SelectContext,
): Promise<{ variables: Variable[]; autoCancel: AutoCancelConfig } | null> {
  if (workflow.rules === null) return { variables: [], autoCancel: workflow.autoCancel };
  const rule = await firstMatchingRule(workflow.rules, variableMap(ctx, globals), ctx);
  if (!rule || rule.when === 'never') return null;
  const own = rule.autoCancel;
  return {
    variables: rule.variables ?? [],
    autoCancel: {
      onNewCommit: own?.onNewCommit ?? workflow.autoCancel.onNewCommit,
      onJobFailure: own?.onJobFailure ?? workflow.autoCancel.onJobFailure,
    },
  };
}

export function globalVariables(root: Hash): Variable[] {
  return parseVariables(root.variables, '');
}
