/**
 * How far a computed list page can go on this stack: the floor under each page issue 17 sets a
 * target for, measured beside kiln and the bare server in one run. bench/floor-server.ts serves
 * the page's bytes alone, its JSON written from objects, and its SQLite statements plus that JSON;
 * kiln serves the page computed (a parameter the API ignores differs on every request, so nothing
 * remembered answers it). Each figure is server CPU per request and its ratio to the bare server
 * (bench/bare-server.ts), with the µs a page may cost to meet its target beside it.
 *
 *   node bench/floor.ts          # BENCH_USERS, BENCH_JOBS (100,000), BENCH_ROUNDS (5), BENCH_SECONDS (2)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { seedDatabase } from './seed.ts';
import { inProcessKiln } from './in-process.ts';
import { startKiln } from './kiln-process.ts';
import { median, runner, startProcess, type Server, type Target } from './measure.ts';

const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = { duration: Number(process.env.BENCH_SECONDS ?? 2), connections: 10 };

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-floor-'));
  const users = Number(process.env.BENCH_USERS ?? 100_000);
  const { ciProjectId } = await seedDatabase({ dataDir, databaseUrl: null, users, jobs: Number(process.env.BENCH_JOBS ?? users), rootToken: ROOT_TOKEN, userToken: USER_TOKEN });
  const root = { 'private-token': ROOT_TOKEN };
  const user = { 'private-token': USER_TOKEN };
  const pages = [
    { name: 'users-admin', title: 'GET /users?per_page=20 (admin)', path: '/api/v4/users?per_page=20', headers: root, target: 0.15 },
    { name: 'users-user', title: 'GET /users?per_page=20 (user token)', path: '/api/v4/users?per_page=20', headers: user, target: 0.2 },
    { name: 'jobs', title: 'GET /projects/:id/jobs', path: `/api/v4/projects/${ciProjectId}/jobs?per_page=20`, headers: root, target: 0.1 },
    { name: 'pipelines', title: 'GET /projects/:id/pipelines', path: `/api/v4/projects/${ciProjectId}/pipelines?per_page=20`, headers: root, target: 0.1 },
  ];

  // What each page runs and answers, computed, once kiln is warm (what it remembers across pages,
  // such as the caller's token and the project, is not among the statements, as in the server).
  const kilnInProcess = await inProcessKiln(dataDir);
  const spec: { sqliteFile: string; pages: Record<string, { body: string; statements: unknown[] }> } = { sqliteFile: path.join(dataDir, 'kiln.sqlite3'), pages: {} };
  for (const p of pages) {
    for (let i = 0; i < 20; i++) await kilnInProcess.app.inject({ url: `${p.path}&bench=warm${i}`, headers: p.headers });
    const captured = await kilnInProcess.capture(`${p.path}&bench=captured`, p.headers);
    if (captured.status !== 200) throw new Error(`${p.path}: ${captured.status} ${captured.body.slice(0, 200)}`);
    spec.pages[p.name] = { body: captured.body, statements: captured.statements };
    process.stdout.write(`${p.title}: ${captured.body.length} bytes, ${captured.statements.length} statements\n`);
  }
  await kilnInProcess.close();
  const specFile = path.join(dataDir, 'floor-spec.json');
  await fs.writeFile(specFile, JSON.stringify(spec));

  const pkg = JSON.parse(await fs.readFile(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  const bare = await startProcess(path.join(import.meta.dirname, 'bare-server.ts'), { PORT: '0' });
  const floor = await startProcess(path.join(import.meta.dirname, 'floor-server.ts'), { FLOOR_SPEC: specFile });
  const kiln = await startKiln({ dataDir, databaseUrl: null, nodeFlags: pkg.scripts.start.split(' ').filter((w) => w.startsWith('--')) });
  try {
    const bareServer: Server = { base: `http://127.0.0.1:${bare.port}`, pid: bare.child.pid! };
    const floorServer: Server = { base: `http://127.0.0.1:${floor.port}`, pid: floor.child.pid! };
    const kilnServer: Server = { base: kiln.base, pid: kiln.child.pid! };
    const lines: string[] = [];
    for (const p of pages) {
      const variants: [string, ReturnType<typeof runner>][] = [
        ['the bytes alone (socket)', runner(floorServer, { name: 'bytes', path: `/bytes/${p.name}` }, RUNS)],
        ['JSON.stringify + socket', runner(floorServer, { name: 'json', path: `/json/${p.name}` }, RUNS)],
        ['SQLite statements + JSON + socket', runner(floorServer, { name: 'sql', path: `/sql/${p.name}` }, RUNS)],
        ['kiln, computed', runner(kilnServer, { name: 'kiln', path: `${p.path}&bench=0`, paths: (n) => `${p.path}&bench=${n}`, headers: p.headers } satisfies Target, RUNS)],
      ];
      const bareRuns = runner(bareServer, { name: 'bare', path: '/' }, RUNS);
      await bareRuns.warmUp();
      for (const [, v] of variants) await v.warmUp();
      const bares = [(await bareRuns.measure()).cpu];
      const cpu = new Map<string, number[]>(variants.map(([label]) => [label, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, v] of variants) cpu.get(label)!.push((await v.measure()).cpu);
        bares.push((await bareRuns.measure()).cpu);
      }
      const bareUs = median(bares);
      lines.push(`\n${p.title}: bare ${bareUs.toFixed(1)} µs; the target (${p.target * 100} % of bare) allows ${(bareUs / p.target).toFixed(0)} µs a page`);
      for (const [label, runs] of cpu) {
        const ratios = runs.map((us, i) => (bares[i] + bares[i + 1]) / 2 / us);
        lines.push(`  ${label.padEnd(36)} ${median(runs).toFixed(1).padStart(7)} µs  ${(median(ratios) * 100).toFixed(1).padStart(5)} % of bare`);
      }
    }
    process.stdout.write(`\nserver CPU per request, median of ${ROUNDS} runs of ${RUNS.duration} s each (SQLite, ${users} users, ${os.cpus().length} cores)${lines.join('\n')}\n`);
  } finally {
    await kiln.stop();
    bare.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
