/**
 * The benchmark: seeds a database (100k users by default), starts kiln and a bare node:http
 * server as separate processes, runs autocannon against each endpoint in the same run, and prints
 * req/s, p99 latency and each endpoint's ratio to the bare server, twice over:
 *
 * - by throughput: each endpoint runs in rounds (BENCH_ROUNDS, default 5, of BENCH_SECONDS,
 *   default 2) that alternate with runs of the bare server, each kiln run compared with the bare
 *   runs just before and after it; the ratio is the median of those comparisons;
 * - by server CPU: the CPU time the server process spent per answered request during those same
 *   runs (user + system, from /proc), bare's cost divided by the endpoint's.
 *
 * This machine shares its host: the same bare server answers anywhere between 30,000 and 50,000
 * requests a second from one 2-second window to the next, and far less while the host throttles,
 * so ratios move by about ten points from run to run. CPU per request is disturbed by the host
 * too, but it measures the server alone, not the load generator that shares its cores, and says
 * what a server with a core to itself could sustain (1 s / µs per request). Ratios, not absolute
 * numbers, are what compare across machines.
 *
 *   npm run bench                      # SQLite, 100k users
 *   BENCH_USERS=10000 npm run bench     # smaller seed
 *   BENCH_JOBS=100000                   # jobs of the CI project (GET /projects/:id/jobs)
 *   BENCH_ISSUES=100000                 # issues of the CI project (GET /projects/:id/issues), a third labelled `bug`
 *   BENCH_MERGE_REQUESTS=10000          # merge requests of the CI project (GET /projects/:id/merge_requests), labelled as the
 *                                       # issues, each with assignees (and every other a reviewer) among 50 users
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # PostgreSQL
 *   BENCH_ONLY='users/:id' npm run bench  # only the endpoints whose name contains this text ('a|b': either)
 *   npm run bench -- --scale 1000000    # a million users and a million jobs (BENCH_USERS/BENCH_JOBS still win)
 *   BENCH_WORKERS=2 npm run bench       # kiln with KILN_WORKERS=2 (CPU and RSS summed over its processes)
 *   BENCH_NODE_FLAGS='' npm run bench   # kiln without the Node flags `npm start` gives it
 *
 * Besides the table it prints the seeding time, kiln's boot time on the seeded database
 * (`kiln serve` until /-/readiness answers 200) and its resident memory idle and after the runs.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';
import { parseArgs } from 'node:util';
import { JOBS_PER_PIPELINE, seedDatabase } from './seed.ts';
import { median, rssMegabytes, runner, startProcess, type Measured, type Server, type Target } from './measure.ts';

const { values: args } = parseArgs({ options: { scale: { type: 'string' } } });
const SCALE = args.scale === undefined ? 100_000 : Number(args.scale);
if (!Number.isSafeInteger(SCALE) || SCALE < 1) throw new Error(`--scale must be a positive whole number, got ${args.scale}`);
const USERS = Number(process.env.BENCH_USERS ?? SCALE);
const JOBS = Number(process.env.BENCH_JOBS ?? SCALE);
const ISSUES = Number(process.env.BENCH_ISSUES ?? SCALE);
const MERGE_REQUESTS = Number(process.env.BENCH_MERGE_REQUESTS ?? 10_000);
const WORKERS = process.env.BENCH_WORKERS ?? '1';
const DURATION = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RUNS = { duration: DURATION, connections: CONNECTIONS };
const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';

async function waitForHttp(url: string, everyMs = 100): Promise<void> {
  for (let i = 0; i < 20_000 / everyMs; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${url} never answered`);
}

/**
 * The Node flags `npm start` gives kiln (package.json's start script), so that the bench measures
 * kiln as it is run; BENCH_NODE_FLAGS overrides them ('' for Node's defaults).
 */
async function kilnNodeFlags(): Promise<string[]> {
  if (process.env.BENCH_NODE_FLAGS !== undefined) return process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean);
  const pkg = JSON.parse(await fs.readFile(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(' ');
  return words.slice(1, words.indexOf('src/main.ts')).filter((w) => w.startsWith('--'));
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-bench-'));
  const { url: databaseUrl, drop: dropDatabase } = await benchDatabase();
  const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';
  process.stdout.write(
    `seeding ${USERS} users and a project with ${JOBS} jobs, ${ISSUES} issues and ${MERGE_REQUESTS} merge requests on ${engine}…\n`,
  );
  const seedStart = Date.now();
  const { ciProjectId } = await seedDatabase({
    dataDir, databaseUrl, users: USERS, jobs: JOBS, issues: ISSUES, mergeRequests: MERGE_REQUESTS,
    rootToken: ROOT_TOKEN, userToken: USER_TOKEN,
  });
  process.stdout.write(`seeded in ${((Date.now() - seedStart) / 1000).toFixed(1)} s\n`);

  const bare = await startProcess(path.join(import.meta.dirname, 'bare-server.ts'), { PORT: '0' });
  const port = 20000 + Math.floor(Math.random() * 20000);
  const bootStart = Date.now();
  const kiln = spawn(process.execPath, [...await kilnNodeFlags(), path.join(import.meta.dirname, '..', 'src', 'main.ts'), 'serve'], {
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', KILN_DATA_DIR: dataDir, LOG_LEVEL: 'warn', KILN_WORKERS: WORKERS,
      KILN_SSH_PORT: '0',
      KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', KILN_EXTERNAL_URL: `http://127.0.0.1:${port}`,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // With KILN_WORKERS the first process answers readiness before the others listen: wait for the
  // primary's line saying all of them do.
  let kilnOut = '';
  const allListening = new Promise<void>((resolve) => {
    kiln.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      kilnOut += chunk.toString();
      if (WORKERS === '1' || /server processes listening/.test(kilnOut)) resolve();
    });
    if (WORKERS === '1') resolve();
  });
  const kilnBase = `http://127.0.0.1:${port}`;
  const kilnServer: Server = { base: kilnBase, pid: kiln.pid! };
  const bareServer: Server = { base: `http://127.0.0.1:${bare.port}`, pid: bare.child.pid! };
  const footprint: string[] = [];
  try {
    // Boot to ready on the seeded database (issue 17, item 5): spawn until readiness answers.
    await waitForHttp(`${kilnBase}/-/readiness`, 10);
    await allListening;
    footprint.push(`boot to ready: ${((Date.now() - bootStart) / 1000).toFixed(2)} s`);
    await new Promise((r) => setTimeout(r, 2_000));
    footprint.push(`RSS idle: ${(await rssMegabytes(kiln.pid!)).toFixed(0)} MB`);
    const auth = { 'private-token': ROOT_TOKEN };
    const userToken = USER_TOKEN;
    const mid = Math.floor(USERS / 2) + 2;
    // Seeded users have the ids 2 … USERS + 1; the rotating target walks them from the middle,
    // so each request reads a user no earlier request asked for (nothing remembered to answer from).
    const seededUser = (n: number) => `/api/v4/users/${2 + ((mid - 2 + n) % USERS)}`;
    // Lists remember whole answers (src/http/lists/remembered-pages.ts); a parameter the API ignores,
    // different on every request, makes each one a URL no earlier request asked for, so these
    // targets measure computing the page.
    const computed = (path: string): Pick<Target, 'path' | 'paths'> => ({ path: `${path}&bench=0`, paths: (n) => `${path}&bench=${n}` });
    const jobsPath = `/api/v4/projects/${ciProjectId}/jobs?per_page=20`;
    const allTargets: Target[] = [
      { name: 'GET /-/liveness', path: '/-/liveness' },
      { name: 'GET /api/v4/users/:id (user token)', path: `/api/v4/users/${mid}`, headers: { 'private-token': userToken } },
      {
        name: 'GET /api/v4/users/:id (user token, a new user each request)', path: seededUser(0),
        paths: seededUser, headers: { 'private-token': userToken },
      },
      { name: 'GET /api/v4/users/:id (admin)', path: `/api/v4/users/${mid}`, headers: auth },
      { name: 'GET /api/v4/user', path: '/api/v4/user', headers: auth },
      { name: 'GET /api/v4/users?per_page=20 (admin)', path: '/api/v4/users?per_page=20', headers: auth },
      { name: 'GET /api/v4/users?per_page=20 (user token)', path: '/api/v4/users?per_page=20', headers: { 'private-token': userToken } },
      { name: `GET /api/v4/projects/:id/jobs (${JOBS} jobs)`, path: `/api/v4/projects/${ciProjectId}/jobs`, headers: auth },
      { name: 'GET /api/v4/projects/:id/jobs?scope=failed', path: `/api/v4/projects/${ciProjectId}/jobs?scope=failed`, headers: auth },
      {
        name: `GET /api/v4/projects/:id/pipelines (${Math.ceil(JOBS / JOBS_PER_PIPELINE)} pipelines)`,
        path: `/api/v4/projects/${ciProjectId}/pipelines`, headers: auth,
      },
      {
        name: 'GET /api/v4/projects/:id/pipelines?status=success',
        path: `/api/v4/projects/${ciProjectId}/pipelines?status=success`, headers: auth,
      },
      // Page 5,000 (offset, as the Service pages these lists): as fast as page 1 at any size (issue 17, item 2).
      { name: 'GET /api/v4/users?per_page=20&page=5000', path: '/api/v4/users?per_page=20&page=5000', headers: auth },
      {
        name: 'GET /api/v4/projects/:id/jobs?page=5000',
        path: `/api/v4/projects/${ciProjectId}/jobs?per_page=20&page=5000`, headers: auth,
      },
      { name: 'GET /api/v4/users?per_page=20 (admin, computed)', ...computed('/api/v4/users?per_page=20'), headers: auth },
      {
        name: 'GET /api/v4/users?per_page=20 (user token, computed)',
        ...computed('/api/v4/users?per_page=20'), headers: { 'private-token': userToken },
      },
      { name: 'GET /api/v4/projects/:id/jobs (computed)', ...computed(jobsPath), headers: auth },
      {
        name: 'GET /api/v4/projects/:id/pipelines (computed)',
        ...computed(`/api/v4/projects/${ciProjectId}/pipelines?per_page=20`), headers: auth,
      },
      { name: 'GET /api/v4/users?per_page=20&page=5000 (computed)', ...computed('/api/v4/users?per_page=20&page=5000'), headers: auth },
      { name: 'GET /api/v4/projects/:id/jobs?page=5000 (computed)', ...computed(`${jobsPath}&page=5000`), headers: auth },
      // A project's issues filtered by a label a third of them carry (issue 29: at least half the users list's ratio).
      {
        name: `GET /api/v4/projects/:id/issues?labels=bug (${ISSUES} issues, computed)`,
        ...computed(`/api/v4/projects/${ciProjectId}/issues?labels=bug&per_page=20`), headers: auth,
      },
      { name: 'GET /api/v4/projects/:id/issues (computed)', ...computed(`/api/v4/projects/${ciProjectId}/issues?per_page=20`), headers: auth },
      // A project's merge requests, newest first (issue 30: at least half the users list's ratio).
      {
        name: `GET /api/v4/projects/:id/merge_requests (${MERGE_REQUESTS} merge requests, computed)`,
        ...computed(`/api/v4/projects/${ciProjectId}/merge_requests?per_page=20`), headers: auth,
      },
    ];
    const only = process.env.BENCH_ONLY;
    const targets = only ? allTargets.filter((t) => only.split('|').some((part) => t.name.includes(part))) : allTargets;
    // The machine's speed drifts over a run (the load generator shares its two cores, and the host
    // is shared too), so each endpoint's runs alternate with the bare server's, and each is
    // compared with the mean of the bare runs on either side of it rather than with one baseline
    // taken minutes earlier; the endpoint's ratio is the median of those comparisons.
    const bareTarget: Target = { name: 'bare node:http', path: '/' };
    const bareRps: number[] = [];
    const bareCpu: number[] = [];
    const results: string[][] = [];
    for (const t of targets) {
      const probe = await fetch(kilnBase + t.path, { headers: t.headers });
      if (!probe.ok) {
        results.push([t.name, `skipped (${probe.status})`, '', '', '', '']);
        continue;
      }
      const bareRuns = runner(bareServer, bareTarget, RUNS);
      const kilnRuns = runner(kilnServer, t, RUNS);
      await bareRuns.warmUp();
      await kilnRuns.warmUp();
      const bares = [await bareRuns.measure()];
      const runs: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        runs.push(await kilnRuns.measure());
        bares.push(await bareRuns.measure());
      }
      bareRps.push(...bares.map((b) => b.rps));
      bareCpu.push(...bares.map((b) => b.cpu));
      const around = (i: number, of: (m: Measured) => number) => (of(bares[i]) + of(bares[i + 1])) / 2;
      const ratio = `${(median(runs.map((m, i) => m.rps / around(i, (b) => b.rps))) * 100).toFixed(0)} %`;
      const cpuRatio = `${(median(runs.map((m, i) => around(i, (b) => b.cpu) / m.cpu)) * 100).toFixed(0)} %`;
      const non2xx = runs.reduce((sum, m) => sum + m.non2xx, 0);
      results.push([
        t.name, median(runs.map((m) => m.rps)).toFixed(0), median(runs.map((m) => m.p99)).toFixed(1),
        non2xx > 0 ? `${ratio} (${non2xx} non-2xx!)` : ratio, median(runs.map((m) => m.cpu)).toFixed(1), cpuRatio,
      ]);
    }
    const rows: string[][] = [
      ['bare node:http (same JSON)', median(bareRps).toFixed(0), '', '100 %', median(bareCpu).toFixed(1), '100 %'],
      ...results,
    ];
    footprint.push(`RSS after the runs: ${(await rssMegabytes(kiln.pid!)).toFixed(0)} MB`);
    printTable(engine, rows);
    process.stdout.write(`kiln (KILN_WORKERS=${WORKERS}): ${footprint.join('; ')}\n`);
  } finally {
    kiln.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await dropDatabase?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}


function printTable(engine: string, rows: string[][]): void {
  const header = ['endpoint', 'req/s', 'p99 ms', 'vs bare (req/s)', 'server CPU µs/req', 'vs bare (CPU)'];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (c ?? '').padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(
    `\nkiln bench on ${engine}: ${USERS} users, ${JOBS} jobs, ${CONNECTIONS} connections, ${ROUNDS} runs of ${DURATION} s per `
    + `endpoint, alternating with the bare server's, ${os.cpus().length} cores\n`,
  );
  process.stdout.write(`${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
