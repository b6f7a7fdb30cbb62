/**
 * One job of the configuration, checked keyword by keyword (the Service's Entry::Job and
 * Entry::Bridge of 15.2), with `default:` values filled in unless `inherit:` says otherwise.
 * What decides whether the job exists (`rules`, `only`, `except`) and how many copies
 * (`parallel`) is kept checked but unevaluated for select.ts and expand.ts.
 */
import {
  WHEN_VALUES, type ArtifactsConfig, type AutoCancelConfig, type JobConfig, type NeedConfig, type Variable, type When,
} from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { isValidExpression } from './expression.ts';
import { parseJobDetails } from './parse-job-details.ts';
import {
  allowFailure, cache, coverage, environment, flattenList, idTokens, image, release, retry, services, strings, stringList, variables,
} from './job-keywords.ts';
import type { Defaults } from './defaults.ts';
import { parseParallel, type ParallelSpec } from './parallel.ts';

export const JOB_KEYS = new Set([
  'tags', 'script', 'image', 'services', 'start_in', 'artifacts', 'cache', 'dependencies', 'before_script', 'after_script',
  'environment', 'coverage', 'retry', 'parallel', 'interruptible', 'timeout', 'resource_group', 'release', 'secrets',
  'extends', 'stage', 'only', 'except', 'rules', 'variables', 'inherit', 'allow_failure', 'when', 'needs', 'hooks',
  'id_tokens', 'dast_configuration', 'type', 'pages', 'publish',
]);
export const BRIDGE_KEYS = new Set([
  'trigger', 'stage', 'allow_failure', 'only', 'except', 'when', 'extends', 'variables', 'needs', 'rules', 'inherit',
  'resource_group', 'environment', 'parallel',
]);
const JOB_WHEN = [...WHEN_VALUES, 'delayed'];
const RULE_WHEN = ['on_success', 'on_failure', 'always', 'manual', 'delayed', 'never'];
const RULE_KEYS = ['if', 'changes', 'exists', 'when', 'start_in', 'allow_failure', 'variables', 'needs', 'interruptible'];
/**
 * A workflow rule's keys (Entry::Workflow's rules metadata, 16.x): a job's, without
 * `interruptible`, with `auto_cancel` (which only a workflow rule may set).
 */
export const WORKFLOW_RULE_KEYS = ['if', 'changes', 'exists', 'when', 'start_in', 'allow_failure', 'variables', 'needs', 'auto_cancel'];
/** Entry::AutoCancel's values (after 15.2). */
const ON_NEW_COMMIT = ['conservative', 'interruptible', 'none'];
const ON_JOB_FAILURE = ['none', 'all'];
/** The directory a Pages job publishes when it names none (Entry::Job's `pages:publish` default). */
const PAGES_PUBLISH_DEFAULT = 'public';

export interface RuleSpec {
  if?: string;
  changes?: { paths: string[]; compareTo?: string };
  exists?: string[];
  when?: string;
  allowFailure?: boolean;
  variables?: Variable[];
  needs?: NeedConfig[];
  /** `rules:interruptible` (after 15.2): overrides the job's `interruptible` when the rule matches. */
  interruptible?: boolean;
  /** `workflow:rules:auto_cancel` (16.8): overrides `workflow:auto_cancel` key by key when the rule matches. */
  autoCancel?: AutoCancelConfig;
}

/**
 * `auto_cancel:` of `workflow:` or of one of its rules (Entry::AutoCancel): `on_new_commit`
 * and `on_job_failure`, each null where not given. `at` names the entry (`workflow:auto_cancel`).
 */
export function parseAutoCancel(value: unknown, at: string): AutoCancelConfig {
  if (value === undefined || value === null) return { onNewCommit: null, onJobFailure: null };
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash`);
  const unknown = Object.keys(value).filter((k) => k !== 'on_new_commit' && k !== 'on_job_failure');
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
  const { on_new_commit: onNew, on_job_failure: onFailure } = value;
  if (onNew !== undefined && (typeof onNew !== 'string' || !ON_NEW_COMMIT.includes(onNew))) {
    throw new ConfigError(`${at} on new commit must be one of: ${ON_NEW_COMMIT.join(', ')}`);
  }
  if (onFailure !== undefined && (typeof onFailure !== 'string' || !ON_JOB_FAILURE.includes(onFailure))) {
    throw new ConfigError(`${at} on job failure must be one of: ${ON_JOB_FAILURE.join(', ')}`);
  }
  return { onNewCommit: (onNew as string | undefined) ?? null, onJobFailure: (onFailure as string | undefined) ?? null };
}

export interface OnlySpec {
  refs: string[] | null;
  variables: string[] | null;
  changes: string[] | null;
  kubernetes: boolean;
}

/** A checked job before selection and expansion. */
export interface JobSpec extends JobConfig {
  rules: RuleSpec[] | null;
  only: OnlySpec | null;
  except: OnlySpec | null;
  parallel: ParallelSpec | null;
  /** Whether `when:` was written on the job (rules fall back to it). */
  whenGiven: boolean;
  /** Whether `allow_failure:` was written on the job. */
  allowFailureGiven: boolean;
  /** The job's own variables (and its matrix values), which win over global ones. */
  ownVariables: Variable[];
  /** Whether `inherit:variables` lets a global variable of that name through. */
  inheritsVariable: (key: string) => boolean;
}

/** `rules:changes` (a list of globs, or `paths` with `compare_to`), of a job's, a workflow's or an include's rule. */
export function changesOf(value: unknown, at: string): RuleSpec['changes'] {
  if (isHash(value)) {
    const paths = strings(value.paths);
    if (paths === null) throw new ConfigError(`${at}:changes paths should be an array of strings`);
    if (Object.keys(value).some((k) => k !== 'paths' && k !== 'compare_to')) {
      throw new ConfigError(
        `${at}:changes config contains unknown keys: ${Object.keys(value).filter((k) => k !== 'paths' && k !== 'compare_to').join(', ')}`,
      );
    }
    if (value.compare_to !== undefined && typeof value.compare_to !== 'string') {
      throw new ConfigError(`${at}:changes compare to should be a string`);
    }
    return { paths, ...(typeof value.compare_to === 'string' ? { compareTo: value.compare_to } : {}) };
  }
  const paths = typeof value === 'string' ? [value] : strings(value);
  if (paths === null) throw new ConfigError(`${at} changes should be an array of strings`);
  if (paths.length > 50) throw new ConfigError(`${at} changes has too many entries (maximum 50)`);
  return { paths };
}

export function parseRules(value: unknown, where: string, allowedWhen = RULE_WHEN, allowedKeys = RULE_KEYS): RuleSpec[] {
  if (!Array.isArray(value)) throw new ConfigError(`${where} rules should be an array of hashes`);
  return flattenList(value).map((raw) => {
    const at = `${where}:rules:rule`;
    if (!isHash(raw)) throw new ConfigError(`${at} config should be a hash`);
    const unknown = Object.keys(raw).filter((k) => !allowedKeys.includes(k));
    if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
    const rule: RuleSpec = {};
    if (raw.if !== undefined && raw.if !== null) {
      if (!isValidExpression(raw.if)) throw new ConfigError(`${at} if invalid expression syntax`);
      rule.if = raw.if as string;
    }
    if (raw.changes !== undefined && raw.changes !== null) rule.changes = changesOf(raw.changes, at);
    if (raw.exists !== undefined && raw.exists !== null) {
      const list = typeof raw.exists === 'string' ? [raw.exists] : strings(raw.exists);
      if (list === null) throw new ConfigError(`${at} exists should be an array of strings`);
      if (list.length > 50) throw new ConfigError(`${at} exists has too many entries (maximum 50)`);
      rule.exists = list;
    }
    if (raw.when !== undefined && raw.when !== null) {
      if (typeof raw.when !== 'string' || !allowedWhen.includes(raw.when)) {
        throw new ConfigError(`${at} when unknown value: ${String(raw.when)}`);
      }
      rule.when = raw.when;
    }
    if (raw.allow_failure !== undefined) {
      if (typeof raw.allow_failure !== 'boolean') throw new ConfigError(`${at} allow_failure should be a boolean value`);
      rule.allowFailure = raw.allow_failure;
    }
    if (raw.interruptible !== undefined) {
      if (typeof raw.interruptible !== 'boolean') throw new ConfigError(`${at} interruptible should be a boolean value`);
      rule.interruptible = raw.interruptible;
    }
    if (raw.variables !== undefined) rule.variables = variables(raw.variables, at);
    if (raw.auto_cancel !== undefined && raw.auto_cancel !== null) {
      rule.autoCancel = parseAutoCancel(raw.auto_cancel, `${at}:auto_cancel`);
    }
    if (raw.needs !== undefined) rule.needs = parseJobDetails('', { needs: raw.needs }, false).needsDetail ?? [];
    return rule;
  });
}

function onlyExcept(value: unknown, at: string): OnlySpec | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value) || typeof value === 'string') {
    const refs = strings(Array.isArray(value) ? value : [value]);
    if (refs === null) throw new ConfigError(`${at} config should be an array of strings or regular expressions`);
    return { refs, variables: null, changes: null, kubernetes: false };
  }
  if (!isHash(value)) throw new ConfigError(`${at} config should be an array or a hash`);
  const unknown = Object.keys(value).filter((k) => !['refs', 'variables', 'changes', 'kubernetes'].includes(k));
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
  const refs = value.refs === undefined ? null : strings(Array.isArray(value.refs) ? value.refs : [value.refs]);
  if (value.refs !== undefined && refs === null) throw new ConfigError(`${at} refs should be an array of strings or regular expressions`);
  const vars = value.variables === undefined ? null : strings(Array.isArray(value.variables) ? value.variables : [value.variables]);
  if (value.variables !== undefined && (vars === null || !vars.every(isValidExpression))) {
    throw new ConfigError(`${at} variables invalid expression syntax`);
  }
  const changes = value.changes === undefined ? null : strings(Array.isArray(value.changes) ? value.changes : [value.changes]);
  if (value.changes !== undefined && changes === null) throw new ConfigError(`${at} changes should be an array of strings`);
  if (value.kubernetes !== undefined && value.kubernetes !== 'active') {
    throw new ConfigError(`${at} kubernetes unknown value: ${String(value.kubernetes)}`);
  }
  return { refs, variables: vars, changes, kubernetes: value.kubernetes === 'active' };
}

function dependencies(value: unknown, where: string): string[] | null {
  if (value === undefined || value === null) return null;
  const list = strings(value);
  if (list === null) throw new ConfigError(`${where} dependencies should be an array of strings`);
  return list;
}

function script(value: unknown, where: string, key: string): string[] {
  if (value === null) return [];
  const list = stringList(value);
  if (list === null) throw new ConfigError(`${where} ${key} should be a string or a nested array of strings up to 10 levels deep`);
  return list;
}

function inherited(hash: Hash, where: string): { defaults: (key: string) => boolean; variables: (key: string) => boolean } {
  const inherit = hash.inherit;
  if (inherit === undefined || inherit === null) return { defaults: () => true, variables: () => true };
  if (!isHash(inherit)) throw new ConfigError(`${where}:inherit config should be a hash`);
  const pick = (v: unknown, name: string) => {
    if (v === undefined || v === null || v === true) return () => true;
    if (v === false) return () => false;
    const list = strings(v);
    if (list === null) throw new ConfigError(`${where}:inherit:${name} config should be a boolean value or an array of strings`);
    return (k: string) => list.includes(k);
  };
  const unknown = Object.keys(inherit).filter((k) => k !== 'default' && k !== 'variables');
  if (unknown.length > 0) throw new ConfigError(`${where}:inherit config contains unknown keys: ${unknown.join(', ')}`);
  return { defaults: pick(inherit.default, 'default'), variables: pick(inherit.variables, 'variables') };
}

/**
 * `pages:` and `publish:` (after 15.2): a job is a Pages job by `pages: true` or a hash, or by its
 * name `pages` unless `pages: false`; the directory it publishes (`publish:`, `pages:publish`,
 * else `public`) is added to its artifacts' paths, as the Service adds it. kiln hosts no Pages
 * site, so what only a deployment means (`path_prefix`, `expire_in`) is refused, not ignored.
 */
function pagesArtifacts(name: string, hash: Hash, where: string, given: ArtifactsConfig | null): ArtifactsConfig | null {
  const pages = hash.pages;
  if (pages === undefined && hash.publish === undefined) return given;
  if (pages !== undefined && pages !== null && typeof pages !== 'boolean' && !isHash(pages)) {
    throw new ConfigError(`${where} pages should be a hash or a boolean value`);
  }
  if (hash.publish !== undefined && typeof hash.publish !== 'string') throw new ConfigError(`${where} publish should be a string`);
  let publish = typeof hash.publish === 'string' ? hash.publish : null;
  if (isHash(pages)) {
    const unknown = Object.keys(pages).filter((k) => !['publish', 'path_prefix', 'expire_in'].includes(k));
    if (unknown.length > 0) throw new ConfigError(`${where}:pages config contains unknown keys: ${unknown.join(', ')}`);
    for (const k of ['path_prefix', 'expire_in']) {
      if (pages[k] !== undefined) throw new ConfigError(`${where}:pages ${k} is not supported: kiln does not host Pages sites`);
    }
    if (pages.publish !== undefined && typeof pages.publish !== 'string') throw new ConfigError(`${where}:pages publish should be a string`);
    if (typeof pages.publish === 'string') publish = pages.publish;
  }
  const isPages = pages === true || isHash(pages) || (pages === undefined && name === 'pages');
  if (!isPages) return given;
  const dir = (publish ?? PAGES_PUBLISH_DEFAULT).replace(/\/+$/, '');
  const base: ArtifactsConfig = given ?? { paths: [], untracked: false, when: 'on_success', expireIn: null, reports: { junit: [] } };
  return base.paths.includes(dir) ? base : { ...base, paths: [...base.paths, dir] };
}

export function jobEntry(name: string, hash: Hash, stageList: string[], defs: Defaults, globals: Variable[]): JobSpec {
  const where = `jobs:${name}`;
  const isBridge = hash.trigger !== undefined && hash.trigger !== null;
  const allowed = isBridge ? BRIDGE_KEYS : JOB_KEYS;
  const unknown = Object.keys(hash).filter((k) => !allowed.has(k));
  if (unknown.length > 0) throw new ConfigError(`${where} config contains unknown keys: ${unknown.join(', ')}`);
  // The Service resolves `secrets:` from an external provider (Vault, Azure Key Vault, Google
  // Cloud Secret Manager) when the job starts; kiln has none, and a job without its secrets
  // must not run as if it had them.
  if (hash.secrets !== undefined) {
    throw new ConfigError(`${where} secrets are not supported: kiln has no external secrets provider; use CI/CD variables instead`);
  }
  if (!isBridge && (hash.script === undefined || hash.script === null)) {
    throw new ConfigError(`${where} config should implement a script: or a trigger: keyword`);
  }
  if (hash.rules !== undefined && hash.rules !== null) {
    const clash = ['only', 'except', 'start_in'].filter((k) => hash[k] !== undefined);
    if (clash.length > 0) throw new ConfigError(`${where} config key may not be used with \`rules\`: ${clash.join(', ')}`);
  }
  // `type:` is the deprecated name of `stage:` (spec, deprecations: removed in 16.0).
  const stage = hash.stage ?? hash.type ?? 'test';
  if (typeof stage !== 'string') throw new ConfigError(`${where} stage should be a string`);
  const stageIdx = stageList.indexOf(stage);
  if (stageIdx < 0) throw new ConfigError(`${name} job: chosen stage does not exist; available stages are ${stageList.join(', ')}`);
  const whenGiven = hash.when !== undefined && hash.when !== null;
  const when = whenGiven ? hash.when : 'on_success';
  if (typeof when !== 'string' || !JOB_WHEN.includes(when)) throw new ConfigError(`${where} when should be one of: ${JOB_WHEN.join(', ')}`);
  if (when === 'delayed' && hash.start_in === undefined) throw new ConfigError(`${where} start in should be a duration`);
  const af = allowFailure(hash.allow_failure, where);
  const inherit = inherited(hash, where);
  // A key written as null is not given (the Service's entry factory makes nil an unspecified
  // entry), so `default:` still applies: a component's `before_script: $[[ inputs.x ]]` whose
  // input defaults to null leaves the project's default before_script in place.
  const given = (key: string) => hash[key] !== undefined && hash[key] !== null;
  const fromDefault = <T>(key: string, own: () => T, def: T): T => (given(key) ? own() : inherit.defaults(key) ? def : own());
  const details = parseJobDetails(name, hash, isBridge);
  const ownVars = variables(hash.variables, where);
  const ownKeys = new Set(ownVars.map((v) => v.key));
  const jobTimeout = details.timeout ?? (inherit.defaults('timeout') ? defs.timeout : null);
  const rules = hash.rules === undefined || hash.rules === null ? null : parseRules(hash.rules, where);
  return {
    name,
    type: isBridge ? 'bridge' : 'build',
    stage,
    stageIdx,
    // `delayed` runs as soon as its stage may (kiln schedules no delayed start); start_in is kept.
    when: (when === 'delayed' ? 'on_success' : when) as When,
    // Manual jobs may fail without failing the pipeline unless they say otherwise (the Service's default).
    allowFailure: af.allow ?? when === 'manual',
    script: isBridge ? [] : script(hash.script, where, 'script'),
    beforeScript: isBridge ? [] : fromDefault(
      'before_script', () => script(hash.before_script ?? [], where, 'before_script'), defs.beforeScript,
    ),
    afterScript: isBridge ? [] : fromDefault(
      'after_script', () => script(hash.after_script ?? [], where, 'after_script'), defs.afterScript,
    ),
    image: isBridge ? null : fromDefault('image', () => image(hash.image, where), defs.image),
    variables: [...globals.filter((g) => inherit.variables(g.key) && !ownKeys.has(g.key)), ...ownVars],
    tags: isBridge ? [] : details.tags.length > 0 || hash.tags !== undefined ? details.tags : inherit.defaults('tags') ? defs.tags : [],
    needs: details.needsDetail === null ? null : details.needsDetail.map((n) => n.name),
    needsDetail: details.needsDetail,
    idTokens: isBridge ? null : fromDefault('id_tokens', () => idTokens(hash.id_tokens, where), defs.idTokens),
    artifacts: isBridge ? null : pagesArtifacts(name, hash, where, fromDefault('artifacts', () => details.artifacts, defs.artifacts)),
    trigger: details.trigger,
    timeout: isBridge ? null : jobTimeout,
    services: isBridge ? [] : fromDefault('services', () => services(hash.services, where), defs.services),
    cache: isBridge ? [] : fromDefault('cache', () => cache(hash.cache, where), defs.cache),
    dependencies: dependencies(hash.dependencies, where),
    retry: isBridge ? null : fromDefault('retry', () => retry(hash.retry, where), defs.retry),
    interruptible: fromDefault(
      'interruptible',
      () => (typeof hash.interruptible === 'boolean'
        ? hash.interruptible
        : hash.interruptible === undefined ? null : bad(`${where} interruptible config should be a boolean value`)),
      defs.interruptible,
    ),
    coverage: coverage(hash.coverage, where),
    environment: environment(hash.environment, where),
    release: release(hash.release, where),
    resourceGroup: hash.resource_group === undefined || hash.resource_group === null
      ? null
      : typeof hash.resource_group === 'string' ? hash.resource_group : bad(`${where} resource group should be a string`),
    allowFailureExitCodes: af.exitCodes,
    startIn: typeof hash.start_in === 'string' ? hash.start_in : null,
    node: null,
    rules,
    only: onlyExcept(hash.only, `${where}:only`),
    except: onlyExcept(hash.except, `${where}:except`),
    parallel: parseParallel(hash.parallel, where),
    whenGiven,
    allowFailureGiven: af.allow !== null,
    ownVariables: ownVars,
    inheritsVariable: inherit.variables,
  };
}

function bad(message: string): never {
  throw new ConfigError(message);
}
