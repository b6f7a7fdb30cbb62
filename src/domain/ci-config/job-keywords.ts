/**
 * Keywords that do not decide which jobs exist but are passed on to the runner or shown on the
 * job (the Service's Entry::Image, Service, Cache, Retry, Environment, Release, Coverage,
 * AllowFailure), each checked with the Service's message shape `jobs:<name>:<key> …`.
 */
import { ConfigError, isHash, type Hash } from './config-error.ts';
import type { CacheConfig, EnvironmentConfig, IdTokenConfig, ImageConfig, RetryConfig, ServiceConfig, Variable } from './ci-config.ts';

export const PULL_POLICIES = ['always', 'if-not-present', 'never'];
/** Failure reasons `retry:when` may list (Entry::Retry::FullRetry::ALLOWED_WHEN). */
export const RETRY_WHEN = [
  'always', 'unknown_failure', 'script_failure', 'api_failure', 'stuck_or_timeout_failure', 'runner_system_failure',
  'runner_unsupported', 'stale_schedule', 'job_execution_timeout', 'archived_failure', 'unmet_prerequisites',
  'scheduler_failure', 'data_integrity_failure',
];
const ENV_ACTIONS = ['start', 'prepare', 'stop', 'verify', 'access'];
/** Environment::tiers (Entry::Environment checks deployment_tier against them). */
const ENV_TIERS = ['production', 'staging', 'testing', 'development', 'other'];
/** Gitlab::Regex.environment_name_regex: checked on the name as written, variables and all. */
const ENV_NAME = /^[a-zA-Z0-9_${}. -]([a-zA-Z0-9_/${}. -]*[a-zA-Z0-9_${}. -])?$/;
const CACHE_POLICIES = ['pull', 'push', 'pull-push'];

function unknownKeys(hash: Hash, allowed: string[], at: string): void {
  const unknown = Object.keys(hash).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
}

export function stringList(value: unknown, depth = 0): string[] | null {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value) || depth > 10) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item === 'string') out.push(item);
    else if (typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
    else {
      const nested = stringList(item, depth + 1);
      if (nested === null) return null;
      out.push(...nested);
    }
  }
  return out;
}

/**
 * Nested arrays spliced into their parent, as `[config].flatten` does for `rules:` (Entry::Rules
 * over ComposableArray) and `needs:` (Entry::Needs#compose!): a list built from `!reference`
 * pieces (`rules: [!reference [.base, rules], {if: …}]`) reads as one list. The tree is already
 * bounded in depth by the YAML loader (MAX_DEPTH).
 */
export function flattenList(value: unknown[]): unknown[] {
  if (!value.some(Array.isArray)) return value;
  const out: unknown[] = [];
  for (const item of value) {
    if (Array.isArray(item)) out.push(...flattenList(item));
    else out.push(item);
  }
  return out;
}

/**
 * `id_tokens:` (Entry::IdTokens, after 15.2): variable name → `{ aud }`, one audience or several;
 * kiln signs each as a JWT when a runner takes the job (oauth/ci-id-tokens.ts).
 */
export function idTokens(value: unknown, at: string): IdTokenConfig[] | null {
  if (value === undefined || value === null) return null;
  if (!isHash(value)) throw new ConfigError(`${at}:id_tokens config should be a hash`);
  return Object.entries(value).map(([name, token]) => {
    const here = `${at}:id_tokens:${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,254}$/.test(name)) throw new ConfigError(`${at}:id_tokens ${name} is not a valid variable name`);
    if (!isHash(token)) throw new ConfigError(`${here} config should be a hash`);
    unknownKeys(token, ['aud'], here);
    if (token.aud === undefined || token.aud === null) throw new ConfigError(`${here} config missing required keys: aud`);
    const aud = typeof token.aud === 'string' ? token.aud : strings(token.aud);
    if (aud === null || (Array.isArray(aud) && aud.length === 0)) throw new ConfigError(`${here} aud should be a string or an array of strings`);
    return { name, aud };
  });
}

export function strings(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value as string[] : null;
}

function ports(value: unknown, at: string): ImageConfig['ports'] {
  if (!Array.isArray(value)) throw new ConfigError(`${at}:ports config should be an array of strings or a hash`);
  return value.map((p) => {
    if (typeof p === 'number') return { number: p };
    if (isHash(p) && typeof p.number === 'number') {
      return {
        number: p.number, ...(typeof p.protocol === 'string' ? { protocol: p.protocol } : {}),
        ...(typeof p.name === 'string' ? { name: p.name } : {}),
      };
    }
    throw new ConfigError(`${at}:ports config should be an array of strings or a hash`);
  });
}

/** Imageable's executor_opts schema: `docker` with `platform` (1–64 characters) and `user` (1–255). */
const DOCKER_OPTS: Record<string, number> = { platform: 64, user: 255 };

/**
 * `image:docker` / `services:docker` (Imageable::EXECUTOR_OPTS_KEYS, after 15.2), checked as the
 * Service's executor_opts JSON schema is, with its way of naming what failed: the JSON pointer
 * and the schema keyword (`schema` for a key the schema does not allow).
 */
function executorOpts(value: unknown, at: string): ImageConfig['executorOpts'] {
  const refuse = (pointer: string, what: string): never => {
    throw new ConfigError(`${at} executor opts '${pointer}' must be a valid '${what}'`);
  };
  if (!isHash(value)) return refuse('/docker', 'object');
  const docker: { platform?: string; user?: string } = {};
  for (const [key, v] of Object.entries(value)) {
    const max = DOCKER_OPTS[key];
    if (max === undefined || !Object.hasOwn(DOCKER_OPTS, key)) refuse(`/docker/${key}`, 'schema');
    if (typeof v !== 'string') return refuse(`/docker/${key}`, 'string');
    if (v.length < 1) refuse(`/docker/${key}`, 'minLength');
    if (v.length > max) refuse(`/docker/${key}`, 'maxLength');
    docker[key as 'platform' | 'user'] = v;
  }
  return { docker };
}

function imageHash(value: Hash, at: string, extra: string[]): ImageConfig {
  unknownKeys(value, ['name', 'entrypoint', 'pull_policy', 'ports', 'docker', ...extra], at);
  if (typeof value.name !== 'string') throw new ConfigError(`${at} config should be a hash or a string`);
  const out: ImageConfig = { name: value.name };
  if (value.entrypoint !== undefined) {
    const e = stringList(value.entrypoint);
    if (e === null) throw new ConfigError(`${at} entrypoint should be an array of strings`);
    out.entrypoint = e;
  }
  if (value.pull_policy !== undefined) {
    const list = typeof value.pull_policy === 'string' ? [value.pull_policy] : strings(value.pull_policy);
    if (list === null || list.length === 0 || !list.every((p) => PULL_POLICIES.includes(p))) {
      throw new ConfigError(`${at} pull_policy should be one of: ${PULL_POLICIES.join(', ')}`);
    }
    out.pullPolicy = list;
  }
  if (value.ports !== undefined) out.ports = ports(value.ports, at);
  if (value.docker !== undefined && value.docker !== null) out.executorOpts = executorOpts(value.docker, at);
  return out;
}

export function image(value: unknown, where: string): ImageConfig | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return { name: value };
  if (isHash(value)) return imageHash(value, `${where}:image`, []);
  throw new ConfigError(`${where}:image config should be a hash or a string`);
}

export function services(value: unknown, where: string): ServiceConfig[] {
  if (value === undefined || value === null) return [];
  const at = `${where}:services`;
  if (!Array.isArray(value)) throw new ConfigError(`${at} config should be a array`);
  return value.map((s, i) => {
    if (typeof s === 'string') return { name: s };
    if (!isHash(s)) throw new ConfigError(`${at}:service config should be a hash or a string`);
    const out: ServiceConfig = imageHash(s, `${at}:${i}`, ['alias', 'command', 'variables']);
    if (s.alias !== undefined) {
      if (typeof s.alias !== 'string') throw new ConfigError(`${at}:service alias should be a string`);
      out.alias = s.alias;
    }
    if (s.command !== undefined) {
      const c = stringList(s.command);
      if (c === null) throw new ConfigError(`${at}:service command should be an array of strings`);
      out.command = c;
    }
    if (s.variables !== undefined) out.variables = variables(s.variables, `${at}:service`);
    return out;
  });
}

export function variables(value: unknown, where: string): Variable[] {
  const message = `${where ? `${where} ` : ''}variables config should be a hash of key value pairs, value can be a hash`;
  if (value === undefined || value === null) return [];
  if (!isHash(value)) throw new ConfigError(message);
  return Object.entries(value).map(([key, v]) => {
    const raw = isHash(v) ? v.value ?? '' : v;
    if (raw === null) return { key, value: '' };
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') throw new ConfigError(message);
    return { key, value: String(raw) };
  });
}

function cacheOne(value: unknown, at: string): CacheConfig {
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash`);
  unknownKeys(value, ['key', 'untracked', 'paths', 'policy', 'when', 'unprotect', 'fallback_keys'], at);
  let key: CacheConfig['key'] = 'default';
  if (typeof value.key === 'string' || typeof value.key === 'number') key = String(value.key);
  else if (isHash(value.key)) {
    const files = strings(value.key.files);
    if (files === null || files.length === 0 || files.length > 2) {
      throw new ConfigError(`${at}:key:files config has to be an array of one or two strings`);
    }
    key = { files, ...(typeof value.key.prefix === 'string' ? { prefix: value.key.prefix } : {}) };
  } else if (value.key !== undefined && value.key !== null) {
    throw new ConfigError(`${at}:key config should be a hash, a string or a symbol`);
  }
  const paths = value.paths === undefined ? [] : typeof value.paths === 'string' ? [value.paths] : strings(value.paths);
  if (paths === null) throw new ConfigError(`${at} paths should be an array of strings`);
  const policy = value.policy === undefined ? 'pull-push' : value.policy;
  // A policy may be a $VARIABLE, expanded when the job runs.
  if (typeof policy !== 'string' || (!CACHE_POLICIES.includes(policy) && !policy.includes('$'))) {
    throw new ConfigError(`${at} policy should be pull-push, push, or pull`);
  }
  const when = value.when === undefined ? 'on_success' : value.when;
  if (typeof when !== 'string' || !['on_success', 'on_failure', 'always'].includes(when)) {
    throw new ConfigError(`${at} when should be on_success, on_failure or always`);
  }
  if (value.untracked !== undefined && typeof value.untracked !== 'boolean') {
    throw new ConfigError(`${at} untracked should be a boolean value`);
  }
  // Entry::Cache (after 15.2): at most five fallback keys, tried in order by the runner.
  const fallback = value.fallback_keys === undefined || value.fallback_keys === null ? [] : strings(value.fallback_keys);
  if (fallback === null) throw new ConfigError(`${at} fallback keys should be an array of strings`);
  if (fallback.length > 5) throw new ConfigError(`${at} fallback keys has too many entries (maximum 5)`);
  return { key, untracked: value.untracked === true, policy, paths, when, ...(fallback.length > 0 ? { fallbackKeys: fallback } : {}) };
}

export function cache(value: unknown, where: string): CacheConfig[] {
  if (value === undefined || value === null) return [];
  const at = `${where}:cache`;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 4) throw new ConfigError(`${at} config no more than 4 caches can be created`);
  return list.map((c) => cacheOne(c, at));
}

export function retry(value: unknown, where: string): RetryConfig | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:retry`;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > 2) throw new ConfigError(`${at} config must be between 0 and 2`);
    return { max: value, when: ['always'] };
  }
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash or an integer`);
  unknownKeys(value, ['max', 'when', 'exit_codes'], at);
  const max = value.max ?? 0;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > 2) {
    throw new ConfigError(`${at} max config must be between 0 and 2`);
  }
  const when = value.when === undefined ? ['always'] : typeof value.when === 'string' ? [value.when] : strings(value.when);
  if (when === null) throw new ConfigError(`${at} when should be an array of strings or a string`);
  const bad = when.filter((w) => !RETRY_WHEN.includes(w));
  if (bad.length > 0) throw new ConfigError(`${at} when contains unknown values: ${bad.join(', ')}`);
  return { max, when };
}

export function environment(value: unknown, where: string): EnvironmentConfig | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:environment`;
  const checkName = (name: string) => {
    if (!ENV_NAME.test(name)) {
      throw new ConfigError(`${at} name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'`);
    }
  };
  if (typeof value === 'string') {
    checkName(value);
    return { name: value, action: 'start' };
  }
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash or a string`);
  unknownKeys(value, ['name', 'url', 'action', 'on_stop', 'auto_stop_in', 'kubernetes', 'deployment_tier'], at);
  if (typeof value.name !== 'string' || value.name === '') throw new ConfigError(`${at} name can't be blank`);
  checkName(value.name);
  const action = value.action ?? 'start';
  if (typeof action !== 'string' || !ENV_ACTIONS.includes(action)) {
    throw new ConfigError(`${at} action should be start, stop, prepare, verify, or access`);
  }
  const out: EnvironmentConfig = { name: value.name, action };
  for (const k of ['url', 'on_stop', 'auto_stop_in', 'deployment_tier'] as const) {
    if (value[k] === undefined) continue;
    if (typeof value[k] !== 'string') throw new ConfigError(`${at} ${k.replace(/_/g, ' ')} should be a string`);
    out[k] = value[k];
  }
  if (out.deployment_tier !== undefined && !ENV_TIERS.includes(out.deployment_tier)) {
    throw new ConfigError(`${at} deployment tier must be one of ${ENV_TIERS.join(', ')}`);
  }
  if (value.kubernetes !== undefined) out.kubernetes = value.kubernetes;
  return out;
}

export function release(value: unknown, where: string): Hash | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:release`;
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash`);
  unknownKeys(value, ['tag_name', 'tag_message', 'name', 'description', 'ref', 'released_at', 'milestones', 'assets'], at);
  if (typeof value.tag_name !== 'string') throw new ConfigError(`${at} tag name can't be blank`);
  if (typeof value.description !== 'string') throw new ConfigError(`${at} description can't be blank`);
  return value;
}

/** `coverage: /regex/` → the regex without its slashes. */
export function coverage(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  const m = typeof value === 'string' ? /^\/(.+)\/$/s.exec(value) : null;
  if (!m) throw new ConfigError(`${where}:coverage config must be a regular expression`);
  return m[1];
}

/** `allow_failure: true|false` or `allow_failure: {exit_codes: …}`. */
export function allowFailure(value: unknown, where: string): { allow: boolean | null; exitCodes: number[] | null } {
  if (value === undefined || value === null) return { allow: null, exitCodes: null };
  if (typeof value === 'boolean') return { allow: value, exitCodes: null };
  if (isHash(value) && Object.keys(value).length === 1 && value.exit_codes !== undefined) {
    const codes = Array.isArray(value.exit_codes) ? value.exit_codes : [value.exit_codes];
    if (codes.length === 0 || !codes.every((c) => Number.isInteger(c))) {
      throw new ConfigError(`${where}:allow_failure exit codes should be an array of integers or an integer`);
    }
    return { allow: false, exitCodes: codes as number[] };
  }
  throw new ConfigError(`${where}:allow_failure config should be a hash or a boolean value`);
}
