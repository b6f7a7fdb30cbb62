/**
 * PostgreSQL drivers side by side (issue 17, item 3): the client CPU each spends per round trip
 * on kiln's hot reads, on a database seeded as the bench seeds it, ten queries in flight as ten
 * connections of the bench keep. Compared: pg with unnamed statements (what Kysely sends), pg
 * with named statements (db/prepared.ts's path for compiled reads), and postgres.js (which
 * prepares every statement) with ten connections, and with two and one on which the ten reads are
 * pipelined. Prints µs of client CPU per query and queries a second, each the median of three runs;
 * ratios to pg unnamed.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/pg-drivers.ts
 *
 * pg-native is not in the table: its libpq addon is built by node-gyp against the running Node's
 * headers, and under the Node kiln pins it loads only when rebuilt by hand against them (the
 * machine's npm builds against its own Node 20); rebuilt so, it measured within the noise of pg
 * with named statements on these reads.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import postgres from 'postgres';
import { benchDatabase } from './bench-database.ts';
import { seedDatabase } from './seed.ts';

const QUERIES = Number(process.env.BENCH_QUERIES ?? 5_000);
const IN_FLIGHT = 10;

interface Read {
  name: string;
  sql: string;
  args: (i: number) => unknown[];
}

async function measure(run: (i: number) => Promise<unknown>): Promise<{ cpu: number; qps: number }> {
  for (let i = 0; i < 500; i++) await run(i);
  const results: { cpu: number; qps: number }[] = [];
  for (let round = 0; round < 3; round++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < QUERIES) await run(next++);
    }));
    const used = process.cpuUsage(cpu);
    results.push({ cpu: (used.user + used.system) / QUERIES, qps: QUERIES / ((performance.now() - start) / 1000) });
  }
  const mid = (values: number[]) => values.sort((a, b) => a - b)[1];
  return { cpu: mid(results.map((r) => r.cpu)), qps: mid(results.map((r) => r.qps)) };
}

async function main(): Promise<void> {
  if (!process.env.BENCH_DATABASE_URL) {
    throw new Error('set BENCH_DATABASE_URL to a PostgreSQL server (a fresh database is made beside it)');
  }
  const { url, drop } = await benchDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-pg-drivers-'));
  try {
    const users = Number(process.env.BENCH_USERS ?? 100_000);
    const { ciProjectId } = await seedDatabase({
      dataDir, databaseUrl: url, users, jobs: users, rootToken: 'bench-root-token-0000000001',
      userToken: 'bench-user-token-0000000001',
    });
    const admin = new pg.Client({ connectionString: url! });
    await admin.connect();
    await admin.query('analyze');
    await admin.end();
    const reads: Read[] = [
      { name: 'a user row (GET /users/:id)', sql: 'select * from users where id = $1', args: (i) => [2 + ((i * 7919) % users)] },
      {
        name: 'a page of UserBasic (5 columns)',
        sql: 'select id, username, name, state, avatar from users order by id desc limit 21 offset $1',
        args: () => [0],
      },
      { name: 'a page of jobs (23 columns)', sql: `select id, type, project_id, pipeline_id, name, stage, status, allow_failure, `
        + `failure_reason, ref, tag, user_id, runner_id, tag_list,
        trace_size, downstream_pipeline_id, created_at, queued_at, started_at, finished_at, erased_at, artifacts_expire_at, coverage
        from ci_builds where project_id = $1 and type = 'build' order by id desc limit 21 offset $2`, args: () => [ciProjectId, 0] },
    ];
    const pool = new pg.Pool({ connectionString: url!, max: IN_FLIGHT });
    const pgjs = (max: number) => postgres(url!, { max, prepare: true, onnotice: () => {} });
    const clients = [
      ['postgres.js', pgjs(IN_FLIGHT)], ['postgres.js, 2 connections', pgjs(2)],
      ['postgres.js, 1 connection', pgjs(1)],
    ] as const;
    const rows: string[][] = [];
    for (const r of reads) {
      const unnamed = await measure((i) => pool.query(r.sql, r.args(i)));
      const named = await measure((i) => pool.query({ name: `bench_${reads.indexOf(r)}`, text: r.sql, values: r.args(i) }));
      const measured: [string, { cpu: number; qps: number }][] = [['pg, unnamed', unnamed], ['pg, named', named]];
      for (const [name, sql] of clients) measured.push([
        name, await measure((i) => sql.unsafe(r.sql, r.args(i) as never[], { prepare: true })),
      ]);
      for (const [driver, m] of measured) {
        rows.push([r.name, driver, m.cpu.toFixed(1), `${((unnamed.cpu / m.cpu) * 100).toFixed(0)} %`, m.qps.toFixed(0)]);
      }
    }
    await pool.end();
    for (const [, sql] of clients) await sql.end();
    const header = ['read', 'driver', 'client CPU µs/query', 'vs pg unnamed (CPU)', 'queries/s'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
    process.stdout.write(
      `\nPostgreSQL drivers, ${IN_FLIGHT} queries in flight, ${QUERIES} queries a run, median of 3\n${line(header)}\n| `
      + `${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n`,
    );
    for (const r of rows) process.stdout.write(`${line(r)}\n`);
  } finally {
    await drop?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
