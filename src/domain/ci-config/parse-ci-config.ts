/**
 * `.gitlab-ci.yml` → PipelineConfig, with the Service's validation messages (Gitlab::Ci::Config
 * entries and Gitlab::Ci::YamlProcessor), which the API returns as `{"message":{"base":[…]}}`.
 *
 * Supported: `stages` (default build, test, deploy, between `.pre` and `.post`), `variables`,
 * `default` / top-level `image`, `before_script`, `after_script`, local `include`s, hidden jobs
 * (`.name`) and `extends`, YAML anchors and merge keys; per job the keys of JOB_KEYS and
 * BRIDGE_KEYS. Anything else is refused with the Service's "contains unknown keys" message rather
 * than silently ignored.
 */
import YAML from 'yaml';
import {
  DEFAULT_STAGES, POST_STAGE, PRE_STAGE, WHEN_VALUES,
  type ImageConfig, type JobConfig, type ParseResult, type PipelineConfig, type Variable, type When,
} from './ci-config.ts';
import { parseJobDetails } from './parse-job-details.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';

const ROOT_KEYWORDS = new Set(['stages', 'types', 'variables', 'image', 'before_script', 'after_script', 'default', 'include']);
const DEFAULT_KEYS = new Set(['image', 'before_script', 'after_script', 'tags', 'timeout']);
const JOB_KEYS = new Set(['stage', 'script', 'before_script', 'after_script', 'image', 'variables', 'when', 'allow_failure', 'tags', 'needs', 'artifacts', 'extends', 'timeout']);
const BRIDGE_KEYS = new Set(['stage', 'trigger', 'variables', 'when', 'allow_failure', 'needs', 'extends']);
const MAX_EXTENDS_DEPTH = 11;
const MAX_INCLUDES = 100;

/** Reads a file of the repository at the pipeline's commit; null when it does not exist. */
export type FileReader = (path: string) => Promise<string | null>;

function loadYaml(text: string): unknown {
  try {
    return YAML.parse(text, { merge: true, maxAliasCount: 1000 });
  } catch (err) {
    // The parser's own words, without the source excerpt it appends.
    throw new ConfigError((err as Error).message.split('\n')[0].replace(/:$/, ''));
  }
}

function includePaths(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item === 'string') return item;
    if (isHash(item) && typeof item.local === 'string' && Object.keys(item).length === 1) return item.local;
    throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
  });
}

/** Local includes first, the including file over them (the Service's merge order). */
async function loadWithIncludes(text: string, readFile: FileReader, seen: Set<string>): Promise<Hash> {
  const root = loadYaml(text);
  if (!isHash(root)) throw new ConfigError('Invalid configuration format');
  if (root.include === undefined) return root;
  let merged: Hash = {};
  for (const raw of includePaths(root.include)) {
    const path = raw.replace(/^\/+/, '');
    if (seen.has(path) || seen.size >= MAX_INCLUDES) throw new ConfigError(`Maximum of ${MAX_INCLUDES} nested includes are allowed!`);
    const content = await readFile(path);
    if (content === null) throw new ConfigError(`Local file \`${path}\` does not exist!`);
    let included: Hash;
    try {
      included = await loadWithIncludes(content, readFile, new Set([...seen, path]));
    } catch (err) {
      if (err instanceof ConfigError && !err.message.startsWith('Local file') && !err.message.startsWith('Include')) {
        throw new ConfigError(`Included file \`${path}\` does not have valid YAML syntax!`);
      }
      throw err;
    }
    merged = deepMerge(merged, included);
  }
  const { include: _include, ...rest } = root;
  return deepMerge(merged, rest);
}

function deepMerge(base: Hash, over: Hash): Hash {
  const out: Hash = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isHash(v) && isHash(out[k]) ? deepMerge(out[k] as Hash, v) : v;
  }
  return out;
}

/** `extends:` (string or array), resolved against hidden and visible jobs, deepest first. */
function resolveExtends(name: string, all: Hash, chain: string[] = []): Hash {
  const job = all[name] as Hash;
  if (job.extends === undefined) return job;
  if (chain.includes(name)) throw new ConfigError(`\`${chain[0]}\`: circular dependency detected in \`extends\``);
  if (chain.length >= MAX_EXTENDS_DEPTH) throw new ConfigError(`\`${chain[0]}\`: nesting too deep in \`extends\``);
  const parents = Array.isArray(job.extends) ? job.extends : [job.extends];
  let merged: Hash = {};
  for (const parent of parents) {
    if (typeof parent !== 'string' || !isHash(all[parent])) {
      throw new ConfigError(`\`${chain[0] ?? name}\`: unknown keys in \`extends\` (${String(parent)})`);
    }
    merged = deepMerge(merged, resolveExtends(parent, all, [...chain, name]));
  }
  const { extends: _extends, ...own } = job;
  return deepMerge(merged, own);
}

function stringList(value: unknown, depth = 0): string[] | null {
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

function script(value: unknown, where: string, key: string): string[] {
  const list = stringList(value);
  if (list === null) throw new ConfigError(`${where} ${key} should be a string or a nested array of strings up to 10 levels deep`);
  return list;
}

function variables(value: unknown, where: string): Variable[] {
  const message = `${where ? `${where} ` : ''}variables config should be a hash of key value pairs, value can be a hash`;
  if (value === undefined || value === null) return [];
  if (!isHash(value)) throw new ConfigError(message);
  return Object.entries(value).map(([key, v]) => {
    const raw = isHash(v) ? v.value : v;
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') throw new ConfigError(message);
    return { key, value: String(raw) };
  });
}

function image(value: unknown, where: string): ImageConfig | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return { name: value };
  if (isHash(value) && typeof value.name === 'string') {
    const entrypoint = value.entrypoint === undefined ? undefined : stringList(value.entrypoint);
    if (entrypoint === null) throw new ConfigError(`${where}:image entrypoint should be an array of strings`);
    return entrypoint ? { name: value.name, entrypoint } : { name: value.name };
  }
  throw new ConfigError(`${where}:image config should be a hash or a string`);
}

function unknownKeys(hash: Hash, allowed: Set<string>, where: string): void {
  const unknown = Object.keys(hash).filter((k) => !allowed.has(k));
  if (unknown.length > 0) throw new ConfigError(`${where} config contains unknown keys: ${unknown.join(', ')}`);
}

function stages(root: Hash): string[] {
  const given = root.stages ?? root.types;
  if (given === undefined) return [PRE_STAGE, ...DEFAULT_STAGES, POST_STAGE];
  if (!Array.isArray(given) || !given.every((s) => typeof s === 'string')) throw new ConfigError('stages config should be an array of strings');
  const list = (given as string[]).filter((s) => s !== PRE_STAGE && s !== POST_STAGE);
  return [PRE_STAGE, ...new Set(list), POST_STAGE];
}

interface Defaults {
  image: ImageConfig | null;
  beforeScript: string[];
  afterScript: string[];
}

function defaults(root: Hash): Defaults {
  const def = root.default === undefined ? {} : root.default;
  if (!isHash(def)) throw new ConfigError('default config should be a hash');
  unknownKeys(def, DEFAULT_KEYS, 'default');
  const pick = (k: string) => def[k] ?? root[k];
  return {
    image: image(pick('image'), 'default'),
    beforeScript: pick('before_script') === undefined ? [] : script(pick('before_script'), 'default', 'before_script'),
    afterScript: pick('after_script') === undefined ? [] : script(pick('after_script'), 'default', 'after_script'),
  };
}

function job(name: string, hash: Hash, stageList: string[], defs: Defaults, globals: Variable[]): JobConfig {
  const where = `jobs:${name}`;
  const isBridge = hash.trigger !== undefined;
  unknownKeys(hash, isBridge ? BRIDGE_KEYS : JOB_KEYS, where);
  if (!isBridge && hash.script === undefined) throw new ConfigError(`${where} config should implement a script: or a trigger: keyword`);
  const stage = hash.stage === undefined ? 'test' : hash.stage;
  if (typeof stage !== 'string') throw new ConfigError(`${where} stage should be a string`);
  const stageIdx = stageList.indexOf(stage);
  if (stageIdx < 0) throw new ConfigError(`${name} job: chosen stage does not exist; available stages are ${stageList.join(', ')}`);
  const when = hash.when === undefined ? 'on_success' : hash.when;
  if (typeof when !== 'string' || !(WHEN_VALUES as readonly string[]).includes(when)) {
    throw new ConfigError(`${where} when should be one of: ${WHEN_VALUES.join(', ')}`);
  }
  if (hash.allow_failure !== undefined && typeof hash.allow_failure !== 'boolean') {
    throw new ConfigError(`${where}:allow_failure config should be a boolean value`);
  }
  const details = parseJobDetails(name, hash, isBridge);
  return {
    name,
    type: isBridge ? 'bridge' : 'build',
    stage,
    stageIdx,
    when: when as When,
    // Manual jobs may fail without failing the pipeline unless they say otherwise (the Service's default).
    allowFailure: hash.allow_failure === undefined ? when === 'manual' : hash.allow_failure,
    script: isBridge ? [] : script(hash.script, where, 'script'),
    beforeScript: hash.before_script === undefined ? (isBridge ? [] : defs.beforeScript) : script(hash.before_script, where, 'before_script'),
    afterScript: hash.after_script === undefined ? (isBridge ? [] : defs.afterScript) : script(hash.after_script, where, 'after_script'),
    image: isBridge ? null : hash.image === undefined ? defs.image : image(hash.image, where),
    variables: [...globals.filter((g) => !Object.hasOwn(isHash(hash.variables) ? hash.variables : {}, g.key)), ...variables(hash.variables, where)],
    ...details,
  };
}

/** Checks `needs:` once every job is known (YamlProcessor#validate_job_needs!). */
function checkNeeds(jobs: JobConfig[]): void {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  for (const j of jobs) {
    for (const need of j.needs ?? []) {
      const target = byName.get(need);
      if (!target) throw new ConfigError(`${j.name} job: undefined need: ${need}`);
      if (target.stageIdx > j.stageIdx) throw new ConfigError(`${j.name} job: need ${need} is not defined in current or prior stages`);
    }
  }
}

export async function parseCiConfig(text: string, readFile: FileReader): Promise<ParseResult> {
  try {
    const root = await loadWithIncludes(text, readFile, new Set());
    const stageList = stages(root);
    const defs = defaults(root);
    const globals = variables(root.variables, '');
    const jobHashes: Hash = {};
    for (const [key, value] of Object.entries(root)) {
      if (ROOT_KEYWORDS.has(key)) continue;
      if (!isHash(value)) {
        if (key.startsWith('.')) continue;
        throw new ConfigError(`jobs:${key} config should be a hash`);
      }
      jobHashes[key] = value;
    }
    const jobs: JobConfig[] = [];
    for (const name of Object.keys(jobHashes)) {
      if (name.startsWith('.')) continue;
      jobs.push(job(name, resolveExtends(name, jobHashes), stageList, defs, globals));
    }
    if (jobs.length === 0) throw new ConfigError('jobs config should contain at least one visible job');
    checkNeeds(jobs);
    const config: PipelineConfig = { stages: stageList, variables: globals, jobs };
    return { ok: true, config };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, error: err.message };
    throw err;
  }
}
