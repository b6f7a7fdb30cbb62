/**
 * The runner's configuration file, TOML as the Service's runner keeps it (common/config.go):
 * `concurrent` and `check_interval` at the top, one `[[runners]]` table per registration with
 * its url, token, executor, builds_dir, cache_dir and limit. The file holds runner tokens, so it
 * is written owner-readable only (0600, its directory 0700), whole and atomically.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';

export interface RunnerEntry {
  name: string;
  url: string;
  id: number;
  token: string;
  executor: 'shell' | 'docker';
  builds_dir: string;
  cache_dir: string;
  /** At most this many jobs at once for this runner; 0 = no limit of its own. */
  limit: number;
  /** The Service's runner keeps shell = "bash" for the shell executor. */
  shell?: string;
  /** [runners.docker]: default image, daemon address, default pull_policy list. */
  docker?: { image?: string; host?: string; pull_policy?: string[] };
}

export interface RunnerConfig {
  concurrent: number;
  /** Seconds between job requests when the server has none (the Service's default is 3). */
  check_interval: number;
  runners: RunnerEntry[];
}

export class RunnerConfigError extends Error {}

/** ~/.kiln-runner/config.toml, like the Service runner's ~/.gitlab-runner/config.toml for a user. */
export function defaultConfigPath(): string {
  return path.join(os.homedir(), '.kiln-runner', 'config.toml');
}

const num = (v: unknown, name: string, min: number, max: number, fallback: number): number => {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new RunnerConfigError(`${name} must be an integer from ${min} to ${max}`);
  }
  return v;
};
const str = (v: unknown, name: string, fallback?: string): string => {
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string' || v === '' || v.length > 4096 || v.includes('\0')) {
    throw new RunnerConfigError(`${name} must be a non-empty string`);
  }
  return v;
};

export function defaultDirs(configFile: string): { builds: string; cache: string } {
  const base = path.dirname(path.resolve(configFile));
  return { builds: path.join(base, 'builds'), cache: path.join(base, 'cache') };
}

export async function loadConfig(file: string, o: { mustExist?: boolean } = {}): Promise<RunnerConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !o.mustExist) return { concurrent: 1, check_interval: 3, runners: [] };
    throw new RunnerConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new RunnerConfigError(`${file} is not valid TOML: ${(err as Error).message}`);
  }
  const dirs = defaultDirs(file);
  const runners = Array.isArray(doc.runners) ? doc.runners as Record<string, unknown>[] : [];
  return {
    concurrent: num(doc.concurrent, 'concurrent', 1, 1000, 1),
    check_interval: num(doc.check_interval, 'check_interval', 0, 3600, 3),
    runners: runners.map((r, i) => {
      const at = `runners[${i}]`;
      const executor = str(r.executor, `${at}.executor`, 'shell');
      if (executor !== 'shell' && executor !== 'docker') throw new RunnerConfigError(`${at}.executor must be shell or docker`);
      const url = str(r.url, `${at}.url`);
      if (!/^https?:\/\//.test(url)) throw new RunnerConfigError(`${at}.url must be an http(s) URL`);
      return {
        name: typeof r.name === 'string' ? r.name : '',
        url: url.replace(/\/+$/, ''),
        id: num(r.id, `${at}.id`, 0, 2 ** 31 - 1, 0),
        token: str(r.token, `${at}.token`),
        executor,
        builds_dir: str(r.builds_dir, `${at}.builds_dir`, dirs.builds),
        cache_dir: str(r.cache_dir, `${at}.cache_dir`, dirs.cache),
        limit: num(r.limit, `${at}.limit`, 0, 1000, 0),
        ...(typeof r.shell === 'string' ? { shell: r.shell } : {}),
        ...(r.docker && typeof r.docker === 'object' ? { docker: r.docker as RunnerEntry['docker'] } : {}),
      } satisfies RunnerEntry;
    }),
  };
}

/** Writes the whole file owner-only: a temp file with mode 0600 renamed over the old one. */
export async function saveConfig(file: string, config: RunnerConfig): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const doc = { concurrent: config.concurrent, check_interval: config.check_interval, runners: config.runners };
  await fs.writeFile(
    tmp,
    `# kiln runner configuration: holds runner tokens, keep it owner-readable only.\n${stringify(doc)}\n`,
    { mode: 0o600 },
  );
  await fs.chmod(tmp, 0o600);
  await fs.rename(tmp, file);
}
