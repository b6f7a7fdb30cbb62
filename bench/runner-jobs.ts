/**
 * `kiln runner` throughput (issue 15: target ≥ 300 jobs a minute with `concurrent = 4`): starts
 * `kiln serve` as its own process, pushes a project whose `.gitlab-ci.yml` has BENCH_RUNNER_JOBS
 * trivial jobs (default 200, one stage), registers a runner with `kiln runner register
 * --concurrent 4`, starts `kiln runner run`, creates the pipeline and times it until every job has
 * succeeded. Prints jobs per minute and the CPU time (user + system, from /proc) the server and
 * the runner processes spent per job (the runner's own process only: git and bash are its children
 * and are not counted). Every job fetches the repository as the Service's runner would
 * (GIT_STRATEGY fetch; BENCH_GIT_STRATEGY=none skips it).
 *
 *   node bench/runner-jobs.ts
 *   BENCH_RUNNER_JOBS=400 BENCH_CONCURRENT=8 node bench/runner-jobs.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/runner-jobs.ts
 *
 * The machine is shared with other work: figures move from run to run, compare them within a run.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';

const run = promisify(execFile);
const JOBS = Number(process.env.BENCH_RUNNER_JOBS ?? 200);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 4);
const GIT_STRATEGY = process.env.BENCH_GIT_STRATEGY ?? 'fetch';
const TOKEN = 'bench-runner-root-token-0001';
const REGISTRATION = 'bench-runner-registration-token';
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const gitEnv = {
  PATH: process.env.PATH, HOME: os.tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** CPU time (user + system) a process has used so far, in µs (Linux /proc; 100 ticks a second). */
async function cpuMicros(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-bench-runner-'));
  const { url: databaseUrl, drop: dropDatabase } = await benchDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const kiln = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), KILN_SSH_PORT: '0', KILN_EXTERNAL_URL: base,
      KILN_DATA_DIR: path.join(dir, 'data'),
      KILN_ROOT_TOKEN: TOKEN, KILN_ROOT_PASSWORD: 'bench-password-1234', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION,
      KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let runner: ChildProcess | null = null;
  try {
    const api = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`${base}/api/v4${url}`, {
        method, headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<Record<string, unknown>>;
    };
    for (let i = 0; ; i++) {
      try {
        await api('GET', '/version');
        break;
      } catch (err) {
        if (i > 300) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const project = await api('POST', '/projects', { name: 'bench-runner', path: 'bench-runner' });
    const work = path.join(dir, 'work');
    await run('git', ['init', '--quiet', '--initial-branch=main', work], { env: gitEnv });
    const yml = [
      `variables:\n  GIT_STRATEGY: ${GIT_STRATEGY}\n`,
      ...Array.from({ length: JOBS }, (_, i) => `job-${i}:\n  script: [echo job ${i}]\n`),
    ].join('');
    await fs.writeFile(path.join(work, '.gitlab-ci.yml'), yml);
    await run('git', ['-C', work, 'add', '.'], { env: gitEnv });
    await run('git', ['-C', work, 'commit', '--quiet', '-m', 'bench'], { env: gitEnv });
    const push = new URL(`${base}/${String(project.path_with_namespace)}.git`);
    push.username = 'root';
    push.password = TOKEN;
    await run('git', ['-C', work, 'push', '--quiet', push.toString(), 'HEAD:refs/heads/main'], { env: gitEnv });

    const home = path.join(dir, 'runner-home');
    await fs.mkdir(home);
    const config = path.join(home, 'config.toml');
    await run(
      process.execPath,
      [
        MAIN, 'runner', 'register', '--url', base, '--registration-token', REGISTRATION, '--concurrent',
        String(CONCURRENT), '--config', config,
      ],
      { env: { PATH: process.env.PATH, HOME: home } },
    );
    runner = spawn(
      process.execPath, [MAIN, 'runner', 'run', '--config', config],
      { env: { PATH: process.env.PATH, HOME: home }, stdio: ['ignore', 'ignore', 'ignore'] },
    );
    await new Promise((r) => setTimeout(r, 1000));

    const kilnBefore = await cpuMicros(kiln.pid!);
    const runnerBefore = await cpuMicros(runner.pid!);
    const started = process.hrtime.bigint();
    const pipeline = await api('POST', `/projects/${String(project.id)}/pipeline?ref=main`);
    let status = String(pipeline.status);
    while (!['success', 'failed', 'canceled'].includes(status)) {
      await new Promise((r) => setTimeout(r, 100));
      status = String((await api('GET', `/projects/${String(project.id)}/pipelines/${String(pipeline.id)}`)).status);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const kilnCpu = (await cpuMicros(kiln.pid!)) - kilnBefore;
    const runnerCpu = (await cpuMicros(runner.pid!)) - runnerBefore;
    if (status !== 'success') throw new Error(`the pipeline ended ${status}`);
    const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';
    console.log(
      `kiln runner bench (${engine}, ${JOBS} trivial jobs, concurrent = ${CONCURRENT}, GIT_STRATEGY=${GIT_STRATEGY}, `
      + `${os.cpus().length} cores, shared machine)`,
    );
    console.log(`  wall time            ${seconds.toFixed(1)} s`);
    console.log(`  jobs per minute      ${((JOBS / seconds) * 60).toFixed(0)}  (target ≥ 300)`);
    console.log(`  server CPU per job   ${(kilnCpu / JOBS / 1000).toFixed(1)} ms`);
    console.log(`  runner CPU per job   ${(runnerCpu / JOBS / 1000).toFixed(1)} ms (its own process; git and bash not counted)`);
  } finally {
    runner?.kill('SIGTERM');
    if (runner) await new Promise((r) => runner!.once('close', r));
    kiln.kill('SIGTERM');
    await new Promise((r) => kiln.once('close', r));
    await dropDatabase?.();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
