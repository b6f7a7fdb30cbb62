/**
 * The kiln runner as its users run it: `node src/main.ts runner …` as a separate process, with a
 * config file in a scratch HOME, talking HTTP to a listening kiln of the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import yauzl from 'yauzl';
import type { ListeningTestApp } from '../helpers/listen.ts';
import type { CiProject } from '../helpers/ci.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE = process.execPath;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function scratchHome(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'kiln-runner-test-'));
}

function runnerEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, LANG: 'C', DOCKER_HOST: `unix://${path.join(home, 'no-docker.sock')}`, ...extra };
}

/** One `kiln runner` command to its end. */
export function runnerCli(home: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(NODE, ['src/main.ts', 'runner', ...args], { cwd: ROOT, env: runnerEnv(home, env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface RunnerDaemon {
  child: ChildProcess;
  log: () => string;
  /** Sends `signal` and waits for the process to end; its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export function startRunner(home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): RunnerDaemon {
  const child = spawn(NODE, ['src/main.ts', 'runner', 'run', ...args], { cwd: ROOT, env: runnerEnv(home, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => { log += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child, exited, log: () => log,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export async function register(t: ListeningTestApp, home: string, registrationToken: string, extra: string[] = [], file = 'config.toml'): Promise<string> {
  const config = path.join(home, 'runner', file);
  const res = await runnerCli(home, ['register', '--url', t.url, '--registration-token', registrationToken, '--description', 'test runner', '--config', config, ...extra]);
  assert.equal(res.code, 0, res.stderr + res.stdout);
  return config;
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const DONE = ['success', 'failed', 'canceled', 'skipped', 'manual'];

export async function waitForPipeline(t: ListeningTestApp, p: CiProject, id: number, timeoutMs = 90_000): Promise<{ status: string }> {
  return waitFor(`pipeline ${id}`, async () => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken });
    const body = res.json() as { status: string };
    return DONE.includes(body.status) ? body : null;
  }, timeoutMs);
}

export interface JobView {
  id: number; name: string; status: string; stage: string; failure_reason?: string; allow_failure: boolean;
  started_at: string | null; finished_at: string | null; artifacts: { file_type: string; size: number; filename: string }[];
}

export async function jobsByName(t: ListeningTestApp, p: CiProject, pipelineId: number): Promise<Record<string, JobView>> {
  const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipelineId}/jobs?per_page=100&include_retried=false`, token: p.ownerToken });
  assert.equal(res.statusCode, 200, res.body);
  return Object.fromEntries((res.json() as JobView[]).map((j) => [j.name, j]));
}

export async function jobTrace(t: ListeningTestApp, p: CiProject, jobId: number): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${jobId}/trace`, token: p.ownerToken });
  return res.statusCode === 200 ? res.body : '';
}

/** The files of a job's stored archive (kiln keeps it under KILN_DATA_DIR, as the job_artifacts row says). */
export async function storedArtifactFiles(t: ListeningTestApp, jobId: number, fileType = 'archive'): Promise<Map<string, string>> {
  const row = await t.db.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId).where('file_type', '=', fileType).executeTakeFirst();
  assert.ok(row, `job ${jobId} has a stored ${fileType}`);
  return unzipEntries(await fs.readFile(path.join(t.dataDir, row.file_path)));
}

export function unzipEntries(zip: Buffer): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => {
      if (err) return reject(err);
      const out = new Map<string, string>();
      z.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) {
          out.set(e.fileName, '');
          z.readEntry();
          return;
        }
        z.openReadStream(e, (err2, s) => {
          if (err2) return reject(err2);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            out.set(e.fileName, Buffer.concat(chunks).toString('utf8'));
            z.readEntry();
          });
        });
      });
      z.on('end', () => resolve(out));
      z.on('error', reject);
      z.readEntry();
    });
  });
}

/**
 * A stand-in for Docker, since this machine has no daemon: a unix socket answering GET /_ping,
 * and a `docker` command on PATH that logs its arguments to `<home>/docker.log` and plays the
 * CLI: pull, image inspect (`missing:*` images are absent and cannot be pulled), network, rm,
 * `run -d` (services), and `run --rm -i … -w DIR …` by running the script it reads on stdin with
 * bash in DIR (the variables come through the CLI's environment, as from `-e NAME`).
 */
export async function fakeDocker(home: string): Promise<{ env: NodeJS.ProcessEnv; log: () => Promise<string>; close: () => Promise<void> }> {
  const bin = path.join(home, 'bin');
  await fs.mkdir(bin, { recursive: true });
  await fs.writeFile(path.join(bin, 'docker'), `#!/usr/bin/env bash
echo "$*" >> "$HOME/docker.log"
case "$1" in
  pull) case "$2" in missing:*) echo "Error response from daemon: manifest unknown" >&2; exit 1;; esac; echo "pulled $2"; exit 0;;
  image) case "$3" in missing:*) exit 1;; esac; exit 0;;
  network|rm) exit 0;;
  run)
    if [ "$2" = "-d" ]; then echo fake-container-id; exit 0; fi
    dir=.
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        -w) dir="$2"; shift 2;;
        -e|--name|--network|-v|--entrypoint) shift 2;;
        sh) break;;
        *) shift;;
      esac
    done
    cd "$dir" && exec bash -s;;
esac
echo "fake docker: unknown command $1" >&2
exit 1
`, { mode: 0o755 });
  const sock = path.join(home, 'docker.sock');
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === '/_ping' ? 200 : 404).end('OK');
  });
  await new Promise<void>((resolve) => server.listen(sock, resolve));
  return {
    env: { PATH: `${bin}:${process.env.PATH}`, DOCKER_HOST: `unix://${sock}` },
    log: () => fs.readFile(path.join(home, 'docker.log'), 'utf8').catch(() => ''),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
