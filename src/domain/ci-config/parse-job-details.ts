/**
 * The job keys with structure of their own: `tags`, `needs`, `artifacts`, `trigger`, `timeout`
 * (Gitlab::Ci::Config::Entry::{Tags, Needs, Artifacts, Reports, Trigger}).
 */
import type { ArtifactsConfig, TriggerConfig } from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { parseDuration } from './duration.ts';

const ARTIFACTS_KEYS = new Set(['name', 'paths', 'untracked', 'when', 'expire_in', 'reports']);
const REPORTS_KEYS = new Set(['junit']);
const TRIGGER_KEYS = new Set(['project', 'branch', 'include', 'strategy']);
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

function needs(value: unknown, where: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value)) throw new ConfigError(`${where} needs config can only be a string, a hash or an array`);
  return value.map((item) => {
    if (typeof item === 'string') return item;
    if (isHash(item) && typeof item.job === 'string') return item.job;
    throw new ConfigError(`${where}:needs config can only be a string or a hash`);
  });
}

function artifacts(value: unknown, where: string): ArtifactsConfig | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:artifacts`;
  if (!isHash(value)) throw new ConfigError(`${at} config should be a hash`);
  const unknown = Object.keys(value).filter((k) => !ARTIFACTS_KEYS.has(k));
  if (unknown.length > 0) throw new ConfigError(`${at} config contains unknown keys: ${unknown.join(', ')}`);
  const paths = value.paths === undefined ? [] : strings(value.paths);
  if (paths === null) throw new ConfigError(`${at} paths should be an array of strings`);
  if (value.name !== undefined && typeof value.name !== 'string') throw new ConfigError(`${at} name should be a string`);
  if (value.untracked !== undefined && typeof value.untracked !== 'boolean') throw new ConfigError(`${at} untracked should be a boolean value`);
  const when = value.when ?? 'on_success';
  if (typeof when !== 'string' || !ARTIFACTS_WHEN.includes(when)) throw new ConfigError(`${at} when should be on_success, on_failure or always`);
  let expireIn: string | null = null;
  if (value.expire_in !== undefined) {
    const text = typeof value.expire_in === 'number' ? String(value.expire_in) : value.expire_in;
    if (typeof text !== 'string' || parseDuration(text) === undefined) throw new ConfigError(`${at} expire in should be a duration`);
    expireIn = text;
  }
  let junit: string[] = [];
  if (value.reports !== undefined) {
    if (!isHash(value.reports)) throw new ConfigError(`${at}:reports config should be a hash`);
    const unknownReports = Object.keys(value.reports).filter((k) => !REPORTS_KEYS.has(k));
    if (unknownReports.length > 0) throw new ConfigError(`${at}:reports config contains unknown keys: ${unknownReports.join(', ')}`);
    const j = value.reports.junit;
    const list = typeof j === 'string' ? [j] : j === undefined ? [] : strings(j);
    if (list === null) throw new ConfigError(`${at}:reports junit should be an array of strings or a string`);
    junit = list;
  }
  return {
    ...(typeof value.name === 'string' ? { name: value.name } : {}),
    paths, untracked: value.untracked === true, when, expireIn, reports: { junit },
  };
}

function includeOf(value: unknown, at: string): string {
  const items = Array.isArray(value) ? value : [value];
  if (items.length !== 1) throw new ConfigError(`${at} include config must be a single local file`);
  const item = items[0];
  if (typeof item === 'string') return item.replace(/^\/+/, '');
  if (isHash(item) && typeof item.local === 'string' && Object.keys(item).length === 1) return item.local.replace(/^\/+/, '');
  throw new ConfigError(`${at} include config must be a single local file`);
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
  out.include = includeOf(value.include, at);
  return out;
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
    needs: needs(hash.needs, where),
    artifacts: artifacts(hash.artifacts, where),
    trigger: isBridge ? trigger(hash.trigger, where) : null,
    timeout,
  };
}
