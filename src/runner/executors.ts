/**
 * Where a job's scripts run. The shell executor: bash on the host, as the runner's user. The
 * docker executor (the Service runner's executors/docker, driven through the `docker` CLI): the
 * job's image pulled per `pull_policy` (always, if-not-present, never), a network of its own,
 * each service started on it under its aliases (the image name without tag, `/` as `__` and as
 * `-`, plus `alias`), and every script run in a fresh container of the image, fed on stdin to the
 * first shell the image has (bash, else sh), with the project directory mounted at the same path
 * so CI_PROJECT_DIR holds inside and out. Sources, cache and artifacts are handled on the host.
 * Variable values reach containers through the docker CLI's environment (`-e NAME`), never its
 * command line.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import type { RunnerEntry } from './config.ts';
import type { ImageSpec, JobResponse } from './job-response.ts';
import { runScript, type RunResult } from './shell.ts';

export interface RunOptions {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
  /** The job's variables (names passed to containers). */
  vars: Map<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  onOutput: (d: Buffer) => void;
}

export interface Executor {
  prepare(): Promise<void>;
  run(o: RunOptions): Promise<RunResult>;
  cleanup(): Promise<void>;
}

export class SystemFailure extends Error {}

export function shellExecutor(projectDir: string, tmpDir: string): Executor {
  return {
    prepare: async () => undefined,
    run: (o) => runScript({ ...o, scriptFile: path.join(tmpDir, `${o.name}.sh`), cwd: projectDir }),
    cleanup: async () => undefined,
  };
}

/** The Service runner's shell detection for images: the first bash, else the first sh. */
const DETECT_SHELL = 'if [ -x /usr/local/bin/bash ]; then exec /usr/local/bin/bash; elif [ -x /usr/bin/bash ]; then exec /usr/bin/bash; '
  + 'elif [ -x /bin/bash ]; then exec /bin/bash; elif [ -x /usr/local/bin/sh ]; then exec /usr/local/bin/sh; '
  + 'elif [ -x /usr/bin/sh ]; then exec /usr/bin/sh; elif [ -x /bin/sh ]; then exec /bin/sh; '
  + 'elif [ -x /busybox/sh ]; then exec /busybox/sh; '
  + 'else echo shell not found; exit 1; fi';

/** A service's host names on the job network (the Service: `a/b:1` → `a__b` and `a-b`, plus its alias). */
export function serviceAliases(s: ImageSpec): string[] {
  // Without digest, tag and a registry's port (`host:5000/a/b:1` → `host/a/b`).
  const bare = s.name.replace(/@.*$/, '').replace(/:[^/]*$/, '').replace(/^([^/]+):\d+\//, '$1/');
  const out = [bare.replaceAll('/', '__'), bare.replaceAll('/', '-'), ...(s.alias ?? '').split(/[\s,]+/)];
  return [...new Set(out.filter((a) => /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(a)))];
}

const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,511}$/;

/** `--entrypoint` and the arguments placed before the command, from an `entrypoint:` list. */
function entrypointArgs(ep: string[] | null | undefined): { flag: string[]; prefix: string[] } {
  if (!ep || ep.length === 0) return { flag: [], prefix: [] };
  return { flag: ['--entrypoint', ep[0]], prefix: ep.slice(1) };
}

export function dockerExecutor(o: {
  entry: RunnerEntry; job: JobResponse; host: string; projectDir: string; tmpDir: string; notice: (t: string) => void;
  output: (d: Buffer) => void;
}): Executor {
  const id = `kiln-job-${o.job.id}-${crypto.randomBytes(4).toString('hex')}`;
  const network = `${id}-network`;
  const containers: string[] = [];
  let networkCreated = false;
  const image = o.job.image?.name || o.entry.docker?.image || '';
  const cliEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH, HOME: process.env.HOME, DOCKER_HOST: o.host, ...extra,
  });

  const docker = (args: string[], env: NodeJS.ProcessEnv = cliEnv(), quiet = false): Promise<number> => new Promise((resolve) => {
    const child = spawn('docker', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (!quiet) {
      child.stdout.on('data', o.output);
      child.stderr.on('data', o.output);
    } else {
      child.stdout.resume();
      child.stderr.resume();
    }
    child.on('error', (err) => {
      o.output(Buffer.from(`${err.message}\n`));
    });
    child.on('close', (code) => resolve(code ?? 1));
  });

  const pull = async (spec: ImageSpec | { name: string; pull_policy?: string[] }) => {
    if (!IMAGE.test(spec.name)) throw new SystemFailure(`invalid image name ${JSON.stringify(spec.name)}`);
    const policies = spec.pull_policy && spec.pull_policy.length > 0 ? spec.pull_policy : o.entry.docker?.pull_policy ?? ['always'];
    for (const policy of policies) {
      if (policy === 'if-not-present' || policy === 'never') {
        if (await docker(['image', 'inspect', spec.name], cliEnv(), true) === 0) {
          o.notice(`Using locally found image ${spec.name} ...`);
          return;
        }
        if (policy === 'never') continue;
      } else if (policy !== 'always') {
        throw new SystemFailure(`unknown pull_policy ${JSON.stringify(policy)}`);
      }
      o.notice(`Pulling docker image ${spec.name} ...`);
      if (await docker(['pull', spec.name]) === 0) return;
    }
    throw new SystemFailure(`failed to pull image "${spec.name}" with the pull policies ${JSON.stringify(policies)}`);
  };

  const envFlags = (vars: Map<string, string>) => [...vars.keys()].flatMap((k) => ['-e', k]);

  return {
    prepare: async () => {
      if (!image) throw new SystemFailure('the job has no image and this runner has no default image ([runners.docker] image)');
      o.notice(`Using Docker executor with image ${image} ...`);
      await pull({ name: image, pull_policy: o.job.image?.pull_policy });
      if (await docker(['network', 'create', network], cliEnv(), true) !== 0) throw new SystemFailure('creating the job network failed');
      networkCreated = true;
      for (const [i, s] of (o.job.services ?? []).entries()) {
        o.notice(`Starting service ${s.name} ...`);
        await pull(s);
        const name = `${id}-service-${i}`;
        containers.push(name);
        const vars = new Map((s.variables ?? []).map((v) => [v.key, v.value]));
        const ep = entrypointArgs(s.entrypoint);
        const code = await docker([
          'run', '-d', '--name', name, '--network', network, ...serviceAliases(s).flatMap((a) => ['--network-alias', a]),
          ...envFlags(vars), ...ep.flag, s.name, ...ep.prefix, ...(s.command ?? []),
        ], cliEnv(Object.fromEntries(vars)), true);
        if (code !== 0) throw new SystemFailure(`starting service ${s.name} failed`);
      }
    },
    run: (r) => {
      const name = `${id}-${r.name}`;
      containers.push(name);
      const ep = entrypointArgs(o.job.image?.entrypoint);
      const argv = [
        'docker', 'run', '--rm', '-i', '--name', name, '--network', network,
        '-v', `${o.projectDir}:${o.projectDir}`, '-v', `${o.tmpDir}:${o.tmpDir}`, '-w', o.projectDir,
        ...envFlags(r.vars), ...ep.flag, image, ...ep.prefix, 'sh', '-c', DETECT_SHELL,
      ];
      return runScript({
        ...r, argv, scriptFile: '', cwd: o.projectDir, env: cliEnv(Object.fromEntries(r.vars)),
        onStop: () => void docker(['rm', '-f', name], cliEnv(), true),
      });
    },
    cleanup: async () => {
      for (const c of containers) await docker(['rm', '-f', c], cliEnv(), true);
      if (networkCreated) await docker(['network', 'rm', network], cliEnv(), true);
    },
  };
}
