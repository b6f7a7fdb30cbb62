/**
 * How far a computed list page can go on this stack: the floor under each page issue 17 sets a
 * target for, measured beside kiln and the bare server in one run. bench/floor-server.ts serves
 * the page's bytes alone, its JSON written from objects, and its SQLite statements plus that JSON;
 * kiln serves the page computed (a parameter the API ignores differs on every request, so nothing
 * remembered answers it). Each figure is server CPU per request and its ratio to the bare server
 * (bench/bare-server.ts), with the µs a page may cost to meet its target beside it.
 *
 * On PostgreSQL (BENCH_DATABASE_URL) the floor server runs the page's statements as named
 * statements on a pool of 10 connections, as kiln does, each one's rows read as one JSON text
 * (kiln's reading, src/db/prepared.ts); the targets are then item 3's (lists 8 %, an uncached user
 * read 20 %).
 *
 *   node bench/floor.ts          # BENCH_USERS, BENCH_JOBS (100,000), BENCH_ROUNDS (5), BENCH_SECONDS (2)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/floor.ts
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';
import { seedDatabase } from './seed.ts';
import { inProcessKiln } from './in-process.ts';
import { startKiln } from './kiln-process.ts';
import { median, runner, startProcess, type Measured, type Server, type Target } from './measure.ts';
import type { FloorSpec } from './floor-server.ts';

const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = { duration: Number(process.env.BENCH_SECONDS ?? 2), connections: 10 };

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-floor-'));
  const { url: databaseUrl, drop } = await benchDatabase();
  const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';
  const users = Number(process.env.BENCH_USERS ?? 100_000);
  const { ciProjectId } = await seedDatabase({
    dataDir, databaseUrl, users, jobs: Number(process.env.BENCH_JOBS ?? users), rootToken: ROOT_TOKEN,
    userToken: USER_TOKEN,
  });
  const root = { 'private-token': ROOT_TOKEN };
  const user = { 'private-token': USER_TOKEN };
  // A list page computed: a parameter the API ignores differs on every request. A user read that
  // misses what kiln remembers: a different seeded user (ids 2 … users + 1) on every request.
  const list = (path: string) => (n: number | string) => `${path}&bench=${n}`;
  const mid = Math.floor(users / 2) + 2;
  const pages = [
    {
      name: 'users-admin', title: 'GET /users?per_page=20 (admin)', url: list('/api/v4/users?per_page=20'),
      headers: root, target: databaseUrl ? 0.08 : 0.15,
    },
    {
      name: 'users-user', title: 'GET /users?per_page=20 (user token)',
      url: list('/api/v4/users?per_page=20'), headers: user, target: databaseUrl ? 0.08 : 0.2,
    },
    {
      name: 'jobs', title: 'GET /projects/:id/jobs',
      url: list(`/api/v4/projects/${ciProjectId}/jobs?per_page=20`), headers: root,
      target: databaseUrl ? 0.08 : 0.1,
    },
    {
      name: 'pipelines', title: 'GET /projects/:id/pipelines',
      url: list(`/api/v4/projects/${ciProjectId}/pipelines?per_page=20`), headers: root,
      target: databaseUrl ? 0.08 : 0.1,
    },
    {
      name: 'user', title: 'GET /users/:id (user token, a new user each request)', headers: user, target: databaseUrl ? 0.2 : null,
      // Warm-up reads users 2 … 21, the captured read user 100, and kiln's runs walk from the middle.
      url: (n: number | string) => {
        const id = typeof n === 'number' ? 2 + ((mid - 2 + n) % users) : n === 'captured' ? 100 : 2 + Number(n.slice(4));
        return `/api/v4/users/${id}`;
      },
    },
  ];

  // What each page runs and answers once kiln is warm (what it remembers across requests, such
  // as the caller's token and the project, is not among the statements, as in the server).
  const kilnInProcess = await inProcessKiln(dataDir, databaseUrl);
  const spec: FloorSpec = { sqliteFile: databaseUrl ? null : path.join(dataDir, 'kiln.sqlite3'), databaseUrl, pages: {} };
  for (const p of pages) {
    for (let i = 0; i < 20; i++) await kilnInProcess.app.inject({ url: p.url(`warm${i}`), headers: p.headers });
    const captured = await kilnInProcess.capture(p.url('captured'), p.headers);
    if (captured.status !== 200) throw new Error(`${p.url('captured')}: ${captured.status} ${captured.body.slice(0, 200)}`);
    spec.pages[p.name] = { body: captured.body, statements: captured.statements };
    process.stdout.write(`${p.title}: ${captured.body.length} bytes, ${captured.statements.length} statements\n`);
  }
  await kilnInProcess.close();
  const specFile = path.join(dataDir, 'floor-spec.json');
  await fs.writeFile(specFile, JSON.stringify(spec));

  const pkg = JSON.parse(await fs.readFile(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  const bare = await startProcess(path.join(import.meta.dirname, 'bare-server.ts'), { PORT: '0' });
  const floor = await startProcess(path.join(import.meta.dirname, 'floor-server.ts'), { FLOOR_SPEC: specFile });
  const kiln = await startKiln({ dataDir, databaseUrl, nodeFlags: pkg.scripts.start.split(' ').filter((w) => w.startsWith('--')) });
  try {
    const bareServer: Server = { base: `http://127.0.0.1:${bare.port}`, pid: bare.child.pid! };
    const floorServer: Server = { base: `http://127.0.0.1:${floor.port}`, pid: floor.child.pid! };
    const kilnServer: Server = { base: kiln.base, pid: kiln.child.pid! };
    const lines: string[] = [];
    for (const p of pages) {
      const variants: [string, ReturnType<typeof runner>][] = [
        ['the bytes alone (socket)', runner(floorServer, { name: 'bytes', path: `/bytes/${p.name}` }, RUNS)],
        ['JSON.stringify + socket', runner(floorServer, { name: 'json', path: `/json/${p.name}` }, RUNS)],
        [`${engine} statements + JSON + socket`, runner(floorServer, { name: 'sql', path: `/sql/${p.name}` }, RUNS)],
        ['kiln', runner(kilnServer, { name: 'kiln', path: p.url(0), paths: p.url, headers: p.headers } satisfies Target, RUNS)],
      ];
      const bareRuns = runner(bareServer, { name: 'bare', path: '/' }, RUNS);
      await bareRuns.warmUp();
      for (const [, v] of variants) await v.warmUp();
      const bares = [(await bareRuns.measure()).cpu];
      const bareSys: number[] = [];
      const cpu = new Map<string, Measured[]>(variants.map(([label]) => [label, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, v] of variants) cpu.get(label)!.push(await v.measure());
        const b = await bareRuns.measure();
        bares.push(b.cpu);
        bareSys.push(b.sys);
      }
      const bareUs = median(bares);
      const target = p.target === null
        ? 'no target'
        : `the target (${p.target * 100} % of bare) allows ${(bareUs / p.target).toFixed(0)} µs`;
      lines.push(`\n${p.title}: bare ${bareUs.toFixed(1)} µs (${median(bareSys).toFixed(1)} in the kernel); ${target}`);
      for (const [label, runs] of cpu) {
        const ratios = runs.map((m, i) => (bares[i] + bares[i + 1]) / 2 / m.cpu);
        const us = median(runs.map((m) => m.cpu));
        const sys = median(runs.map((m) => m.sys));
        lines.push(
          `  ${label.padEnd(36)} ${us.toFixed(1).padStart(7)} µs (${sys.toFixed(1).padStart(5)} in the kernel)  `
          + `${(median(ratios) * 100).toFixed(1).padStart(5)} % of bare`,
        );
      }
    }
    process.stdout.write(
      `\nserver CPU per request, median of ${ROUNDS} runs of ${RUNS.duration} s each (${engine}, ${users} users, `
      + `${os.cpus().length} cores)${lines.join('\n')}\n`,
    );
  } finally {
    await kiln.stop();
    bare.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await drop?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
