/**
 * `kiln runner <register | run | verify | unregister | list>`: the command line of kiln's built-in
 * runner, with the options of the Service's runner (commands/register.go, multi.go,
 * verify.go, unregister.go). Every subcommand takes `--config FILE` (default
 * ~/.kiln-runner/config.toml).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { registerRunner, unregisterRunner, verifyRunner } from './api.ts';
import { defaultConfigPath, defaultDirs, loadConfig, RunnerConfigError, saveConfig, type RunnerEntry } from './config.ts';
import { RunnerProcess } from './multi.ts';

export const RUNNER_USAGE = `usage: kiln runner <command> [options]
  register    --url URL --registration-token TOKEN [--description TEXT] [--tag-list a,b]
              [--run-untagged] [--locked] [--paused] [--access-level not_protected|ref_protected]
              [--maximum-timeout SECONDS] [--executor shell|docker] [--builds-dir DIR]
              [--cache-dir DIR] [--limit N] [--concurrent N] [--docker-image IMAGE]
  run         [--once]            ask for jobs and run them (--once: one job, then exit)
  verify      [--delete]          check every runner's token (--delete: drop unknown ones)
  unregister  (--token T | --name N | --all-runners)
  list        show the configured runners
every command: --config FILE (default ${defaultConfigPath()})`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  url: { type: 'string', short: 'u' },
  'registration-token': { type: 'string', short: 'r' },
  description: { type: 'string', short: 'd' },
  name: { type: 'string', short: 'n' },
  'tag-list': { type: 'string' },
  'run-untagged': { type: 'boolean' },
  locked: { type: 'boolean' },
  paused: { type: 'boolean' },
  'access-level': { type: 'string' },
  'maximum-timeout': { type: 'string' },
  'maintenance-note': { type: 'string' },
  executor: { type: 'string' },
  'builds-dir': { type: 'string' },
  'cache-dir': { type: 'string' },
  'docker-image': { type: 'string' },
  limit: { type: 'string' },
  concurrent: { type: 'string' },
  token: { type: 'string', short: 't' },
  'all-runners': { type: 'boolean' },
  delete: { type: 'boolean' },
  once: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

const intOption = (v: string | undefined, name: string, min: number, max: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return Number(v);
};

export async function runnerMain(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    console.error(`${(err as Error).message}\n${RUNNER_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (values.help || !command) {
    console.log(RUNNER_USAGE);
    return command || values.help ? 0 : 2;
  }
  const file = path.resolve(values.config ?? defaultConfigPath());
  try {
    switch (command) {
      case 'register': return await register(file, values);
      case 'run': return await run(file, Boolean(values.once));
      case 'verify': return await verify(file, Boolean(values.delete));
      case 'unregister': return await unregister(file, values);
      case 'list': {
        const config = await loadConfig(file, { mustExist: true });
        for (const r of config.runners) console.log(
          `${r.name || '(unnamed)'}\texecutor=${r.executor}\ttoken=${r.token.slice(0, 8)}…\turl=${r.url}`,
        );
        return 0;
      }
      default:
        console.error(`unknown command ${command}\n${RUNNER_USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof RunnerConfigError) {
      console.error(err.message);
      return 2;
    }
    console.error((err as Error).message);
    return 1;
  }
}

type Values = Record<string, string | boolean | undefined>;

async function register(file: string, v: Values): Promise<number> {
  const url = v.url as string | undefined;
  const token = v['registration-token'] as string | undefined;
  if (!url || !/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError('--url URL (http or https) is required');
  if (!token) throw new UsageError('--registration-token is required');
  const executor = (v.executor as string | undefined) ?? 'shell';
  if (executor !== 'shell' && executor !== 'docker') throw new UsageError('--executor must be shell or docker');
  const accessLevel = v['access-level'] as string | undefined;
  if (accessLevel !== undefined && accessLevel !== 'not_protected' && accessLevel !== 'ref_protected') {
    throw new UsageError('--access-level must be not_protected or ref_protected');
  }
  const tags = ((v['tag-list'] as string | undefined) ?? '').split(',').map((t) => t.trim()).filter(Boolean);
  const description = (v.description as string | undefined) ?? (v.name as string | undefined) ?? os.hostname();
  const limit = intOption(v.limit as string | undefined, 'limit', 0, 1000) ?? 0;
  const concurrent = intOption(v.concurrent as string | undefined, 'concurrent', 1, 1000);
  const maximumTimeout = intOption(v['maximum-timeout'] as string | undefined, 'maximum-timeout', 600, 2 ** 31 - 1);
  const config = await loadConfig(file);
  const base = url.replace(/\/+$/, '');
  const registered = await registerRunner(base, {
    token, description, tag_list: tags,
    run_untagged: v['run-untagged'] === true || tags.length === 0,
    locked: v.locked === true, paused: v.paused === true, executor,
    ...(accessLevel ? { access_level: accessLevel } : {}),
    ...(maximumTimeout ? { maximum_timeout: maximumTimeout } : {}),
    ...(v['maintenance-note'] ? { maintenance_note: v['maintenance-note'] as string } : {}),
  });
  const dirs = defaultDirs(file);
  const entry: RunnerEntry = {
    name: description, url: base, id: registered.id, token: registered.token, executor: executor as RunnerEntry['executor'],
    builds_dir: path.resolve((v['builds-dir'] as string | undefined) ?? dirs.builds),
    cache_dir: path.resolve((v['cache-dir'] as string | undefined) ?? dirs.cache),
    limit, shell: 'bash',
    ...(executor === 'docker' ? { docker: { ...(v['docker-image'] ? { image: v['docker-image'] as string } : {}) } } : {}),
  };
  config.runners.push(entry);
  if (concurrent) config.concurrent = concurrent;
  await saveConfig(file, config);
  console.log(`Runner registered successfully (id ${registered.id}). Its token is stored in ${file} (readable by its owner only).`);
  return 0;
}

async function run(file: string, once: boolean): Promise<number> {
  const config = await loadConfig(file, { mustExist: true });
  // The file holds runner tokens; jobs run as this user (README, kiln runner: Security).
  const mode = (await fs.stat(file)).mode & 0o777;
  if (mode & 0o077) {
    console.error(`WARNING: ${file} is readable by other users (mode ${mode.toString(8)}); it holds runner tokens: chmod 600 it`);
  }
  if (process.getuid?.() === 0) {
    console.error('WARNING: running as root: every job runs as root on this host; run the runner as an unprivileged user');
  }
  const runner = new RunnerProcess(config, { once });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const) process.on(sig, () => runner.stop(sig));
  await runner.run();
  return 0;
}

async function verify(file: string, del: boolean): Promise<number> {
  const config = await loadConfig(file, { mustExist: true });
  const keep: RunnerEntry[] = [];
  let bad = 0;
  for (const r of config.runners) {
    const ok = await verifyRunner(r.url, r.token);
    console.log(`Verifying runner... ${ok ? 'is alive' : 'is removed'}  runner=${r.token.slice(0, 8)} name=${r.name}`);
    if (ok) keep.push(r);
    else bad += 1;
  }
  if (del && bad > 0) {
    config.runners = keep;
    await saveConfig(file, config);
    console.log(`removed ${bad} runner(s) the server does not know from ${file}`);
  }
  return bad > 0 && !del ? 1 : 0;
}

async function unregister(file: string, v: Values): Promise<number> {
  const config = await loadConfig(file, { mustExist: true });
  const all = v['all-runners'] === true;
  if (!all && !v.token && !v.name) throw new UsageError('unregister needs --token, --name or --all-runners');
  const chosen = config.runners.filter((r) => all || r.token === v.token || (v.name !== undefined && r.name === v.name));
  if (chosen.length === 0) throw new UsageError('no configured runner matches');
  for (const r of chosen) {
    const ok = await unregisterRunner(r.url, r.token);
    console.log(
      `Unregistering runner from the server... ${ok ? 'succeeded' : 'the server did not know it'}  runner=${r.token.slice(0, 8)}`,
    );
  }
  config.runners = config.runners.filter((r) => !chosen.includes(r));
  await saveConfig(file, config);
  return 0;
}
