/**
 * The job keys with structure of their own: `tags`, `needs`, `artifacts`, `trigger`, `timeout`
 * (Gitlab::Ci::Config::Entry::{Tags, Needs, Artifacts, Reports, Trigger}).
 */
import type { ArtifactsConfig, NeedConfig, TriggerConfig } from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { parseDuration } from './duration.ts';
import { flattenList } from './job-keywords.ts';

const ARTIFACTS_KEYS = new Set(['name', 'paths', 'untracked', 'when', 'expire_in', 'reports', 'exclude', 'expose_as', 'public', 'access']);
/** Entry::Artifacts's access levels (after 15.2). */
const ARTIFACTS_ACCESS = ['none', 'developer', 'maintainer', 'all'];
/** Entry::Reports::ALLOWED_KEYS of 15.2. */
const REPORTS_KEYS = new Set([
  'junit', 'codequality', 'sast', 'secret_detection', 'dependency_scanning', 'container_scanning', 'dast', 'license_scanning',
  'performance', 'browser_performance', 'load_performance', 'metrics', 'requirements', 'coverage_report',
  'terraform', 'accessibility', 'lsif', 'cluster_applications',
  'cluster_image_scanning', 'dotenv', 'api_fuzzing', 'coverage_fuzzing', 'cyclonedx', 'license_management', 'cobertura',
]);
const TRIGGER_KEYS = new Set(['project', 'branch', 'include', 'strategy', 'forward']);
const ARTIFACTS_WHEN = ['on_success', 'on_failure', 'always'];

function strings(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value as string[] : null;
}

function tags(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  const list = strings(value);
  if (list === null) throw new ConfigError(`${where} tags should be an array of strings`);
  return [...new Set(list)].sort();
}

function matrixNames(job: string, parallel: unknown, where: string): string[] {
  if (!isHash(parallel) || !Array.isArray(parallel.matrix)) {
    throw new ConfigError(`${where}:needs:need:parallel config should be a hash with matrix`);
  }
  const names: string[] = [];
  for (const entry of parallel.matrix) {
    if (!isHash(entry)) throw new ConfigError(`${where}:needs:need:parallel:matrix config should be an array of hashes`);
    let combos: string[][] = [[]];
    for (const v of Object.values(entry)) {
      const values = (Array.isArray(v) ? v : [v]).map(String);
      combos = combos.flatMap((c) => values.map((x) => [...c, x]));
    }
    for (const c of combos) names.push(`${job}: [${c.join(', ')}]`);
  }
  return names;
}

/** `needs:` entries: names or `{job, artifacts, optional}`; cross-project and pipeline needs only fetch artifacts. */
function needs(given: unknown, where: string): NeedConfig[] | null {
  if (given === undefined || given === null) return null;
  if (!Array.isArray(given)) throw new ConfigError(`${where} needs config can only be a string, a hash or an array`);
  const value = flattenList(given);
  if (value.length > 50) throw new ConfigError(`${where}:needs config has too many entries (maximum 50)`);
  const out: NeedConfig[] = [];
  for (const item of value) {
    if (typeof item === 'string') { out.push({ name: item, artifacts: true, optional: false }); continue; }
    if (isHash(item) && typeof item.job === 'string' && item.project === undefined && item.pipeline === undefined) {
      const need: NeedConfig = { name: item.job, artifacts: item.artifacts !== false, optional: item.optional === true };
      // `parallel: {matrix: […]}` picks copies of a matrix job by their values (their names).
      if (item.parallel !== undefined) need.matrixNames = matrixNames(item.job, item.parallel, where);
      out.push(need);
      continue;
    }
    if (isHash(item) && (item.project !== undefined || item.pipeline !== undefined)) continue;
    throw new ConfigError(`${where}:needs config can only be a string or a hash`);
  }
  return out;
}

function artifacts(value: unknown, where: string): ArtifactsConfig | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:artifacts`;
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash`);
  const unknown = Object.keys(value).filter((k) => !ARTIFACTS_KEYS.has(k));
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
  const paths = value.paths === undefined ? [] : typeof value.paths === 'string' ? [value.paths] : strings(value.paths);
  if (paths === null) throw new ConfigError(`${at} paths should be an array of strings`);
  if (value.name !== undefined && typeof value.name !== 'string') throw new ConfigError(`${at} name should be a string`);
  if (value.untracked !== undefined && typeof value.untracked !== 'boolean') {
    throw new ConfigError(`${at} untracked should be a boolean value`);
  }
  const when = value.when ?? 'on_success';
  if (typeof when !== 'string' || !ARTIFACTS_WHEN.includes(when)) {
    throw new ConfigError(`${at} when should be on_success, on_failure or always`);
  }
  let expireIn: string | null = null;
  if (value.expire_in !== undefined) {
    const text = typeof value.expire_in === 'number' ? String(value.expire_in) : value.expire_in;
    if (typeof text !== 'string' || parseDuration(text) === undefined) throw new ConfigError(`${at} expire in should be a duration`);
    expireIn = text;
  }
  const reports: ArtifactsConfig['reports'] = { junit: [] };
  if (value.reports !== undefined) {
    if (!isHash(value.reports)) throw new ConfigError(`${at}:reports config should be a hash`);
    const unknownReports = Object.keys(value.reports).filter((k) => !REPORTS_KEYS.has(k));
    if (unknownReports.length > 0) throw new ConfigError(`${at}:reports config contains unknown keys: ${unknownReports.join(', ')}`);
    for (const [kind, j] of Object.entries(value.reports)) {
      // coverage_report is {coverage_format, path}; the others a path or a list of paths.
      if (kind === 'coverage_report' && isHash(j) && typeof j.path === 'string') { reports.coverage_report = [j.path]; continue; }
      const list = typeof j === 'string' ? [j] : strings(j);
      if (list === null) throw new ConfigError(`${at}:reports ${kind} should be an array of strings or a string`);
      reports[kind] = list;
    }
  }
  const exclude = value.exclude === undefined ? undefined : typeof value.exclude === 'string' ? [value.exclude] : strings(value.exclude);
  if (exclude === null) throw new ConfigError(`${at} exclude should be an array of strings`);
  if (value.expose_as !== undefined && typeof value.expose_as !== 'string') throw new ConfigError(`${at} expose as should be a string`);
  // `public: false` came first and means what `access: developer` does; the two exclude each other.
  if (value.public !== undefined && value.access !== undefined) throw new ConfigError(`${at} config these keys cannot be used together: public, access`);
  if (value.public !== undefined && typeof value.public !== 'boolean') throw new ConfigError(`${at} public should be a boolean value`);
  if (value.access !== undefined && (typeof value.access !== 'string' || !ARTIFACTS_ACCESS.includes(value.access))) {
    throw new ConfigError(`${at} access should be one of: ${ARTIFACTS_ACCESS.join(', ')}`);
  }
  const access = value.public === false ? 'developer' : value.access as ArtifactsConfig['access'];
  return {
    ...(access !== undefined && access !== 'all' ? { access } : {}),
    ...(typeof value.name === 'string' ? { name: value.name } : {}),
    paths, untracked: value.untracked === true, when, expireIn, reports,
    ...(exclude ? { exclude } : {}), ...(typeof value.expose_as === 'string' ? { exposeAs: value.expose_as } : {}),
  };
}

/**
 * A child pipeline's `trigger:include`: one local file (kept as a path), or up to three include
 * entries of any kind the main configuration takes (Entry::Trigger's SameProjectTrigger reads
 * them as Entry::Includes: local, project, template, remote, artifact and, after 15.2,
 * `component`, each with `inputs`), read through the same include machinery.
 */
function includeOf(value: unknown, at: string): { include?: string; includes?: unknown[] } {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0 || items.length > 3) throw new ConfigError(`${at} include config must be an array of up to 3 files`);
  if (items.length === 1) {
    const item = items[0];
    if (typeof item === 'string' && !/^https?:\/\//.test(item)) return { include: item.replace(/^\/+/, '') };
    if (isHash(item) && typeof item.local === 'string' && Object.keys(item).length === 1) return { include: item.local.replace(/^\/+/, '') };
  }
  for (const item of items) {
    const ok = typeof item === 'string' || (isHash(item) && [
      'local', 'project', 'template', 'remote', 'artifact', 'component',
    ].some((k) => typeof item[k] === 'string'));
    if (!ok) {
      throw new ConfigError(
        `${at} include config must be a file path or a hash of local, project, template, remote, artifact or component`,
      );
    }
  }
  return { includes: items };
}

function trigger(value: unknown, where: string): TriggerConfig {
  const at = `${where}:trigger`;
  if (typeof value === 'string') return { project: value };
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash or a string`);
  const unknown = Object.keys(value).filter((k) => !TRIGGER_KEYS.has(k));
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
  const out: TriggerConfig = {};
  if (value.strategy !== undefined) {
    if (value.strategy !== 'depend') throw new ConfigError(`${at} strategy should be depend`);
    out.strategy = 'depend';
  }
  if (value.forward !== undefined && !isHash(value.forward)) throw new ConfigError(`${at}:forward config should be a hash`);
  if (isHash(value.forward)) {
    const f = value.forward;
    const unknownKey = Object.keys(f).some((k) => k !== 'yaml_variables' && k !== 'pipeline_variables');
    if (unknownKey || Object.values(f).some((v) => typeof v !== 'boolean')) {
      throw new ConfigError(`${at}:forward config should be a hash of yaml_variables and pipeline_variables booleans`);
    }
    out.forward = f as TriggerConfig['forward'];
  }
  if (value.project !== undefined && value.include !== undefined) throw new ConfigError(`${at} config contains unknown keys: include`);
  if (value.project !== undefined) {
    if (typeof value.project !== 'string') throw new ConfigError(`${at} project should be a string`);
    out.project = value.project;
    if (value.branch !== undefined) {
      if (typeof value.branch !== 'string') throw new ConfigError(`${at} branch should be a string`);
      out.branch = value.branch;
    }
    return out;
  }
  if (value.branch !== undefined) throw new ConfigError(`${at} config contains unknown keys: branch`);
  if (value.include === undefined) throw new ConfigError(`${at} config must specify project or include`);
  return { ...out, ...includeOf(value.include, at) };
}

export function parseJobDetails(name: string, hash: Hash, isBridge: boolean) {
  const where = `jobs:${name}`;
  let timeout: number | null = null;
  if (hash.timeout !== undefined) {
    const seconds = typeof hash.timeout === 'string' || typeof hash.timeout === 'number' ? parseDuration(hash.timeout) : undefined;
    if (seconds === undefined || seconds === null || seconds <= 0) throw new ConfigError(`${where} timeout should be a duration`);
    timeout = seconds;
  }
  return {
    tags: tags(hash.tags, where),
    needsDetail: needs(hash.needs, where),
    artifacts: artifacts(hash.artifacts, where),
    trigger: isBridge ? trigger(hash.trigger, where) : null,
    timeout,
  };
}
