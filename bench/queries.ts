/**
 * The statements one request runs, and what each costs the embedded database alone: seeds a
 * SQLite database as the bench does, serves kiln in-process with a query log, sends the request
 * once (after a warm-up), then runs each logged statement 2,000 times through a prepared
 * better-sqlite3 statement and prints its µs per run beside its SQL.
 *
 *   node bench/queries.ts '/api/v4/projects/:ci/jobs?scope=failed' [root|user]   # BENCH_USERS, BENCH_JOBS (100,000)
 *   FULL_SQL=1 node bench/queries.ts …   # each statement whole, not its first 400 characters
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { seedDatabase } from './seed.ts';
import { inProcessKiln } from './in-process.ts';

const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';

async function main(): Promise<void> {
  const [target = '/api/v4/users?per_page=20', who = 'root'] = process.argv.slice(2);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-queries-'));
  const { ciProjectId } = await seedDatabase({
    dataDir, databaseUrl: null, users: Number(process.env.BENCH_USERS ?? 100_000), jobs: Number(process.env.BENCH_JOBS ?? 100_000),
    issues: Number(process.env.BENCH_ISSUES ?? 100_000), mergeRequests: Number(process.env.BENCH_MERGE_REQUESTS ?? 10_000),
    rootToken: ROOT_TOKEN, userToken: USER_TOKEN,
  });
  const kiln = await inProcessKiln(dataDir);
  const app = kiln.app;
  const file = new SQLite(path.join(dataDir, 'kiln.sqlite3'), { readonly: true });
  const url = target.replace(':ci', String(ciProjectId));
  const headers = { 'private-token': who === 'user' ? USER_TOKEN : ROOT_TOKEN };
  // Lists remember whole answers (src/http/lists/remembered-pages.ts): a parameter the API ignores,
  // different for each request, has every one computed, which is what this measures.
  const computed = (i: number) => `${url}${url.includes('?') ? '&' : '?'}bench=${i}`;
  let sent = 0;
  for (let i = 0; i < 50; i++) await app.inject({ url: computed(sent++), headers });
  // The whole request, many times: CPU per request in this process (no network), and the part of
  // it spent inside better-sqlite3's statements.
  const Statement = Object.getPrototypeOf(file.prepare('select 1'));
  const originalAll = Statement.all;
  let inSqlite = 0n;
  Statement.all = function (this: unknown, ...args: unknown[]) {
    const start = process.hrtime.bigint();
    try {
      return originalAll.apply(this, args);
    } finally {
      inSqlite += process.hrtime.bigint() - start;
    }
  };
  const cpu = process.cpuUsage();
  const n = 2_000;
  for (let i = 0; i < n; i++) await app.inject({ url: computed(sent++), headers });
  const used = process.cpuUsage(cpu);
  Statement.all = originalAll;
  process.stdout.write(
    `in process: ${((used.user + used.system) / n).toFixed(1)} µs of CPU per request (inject, no socket), `
    + `${(Number(inSqlite) / 1000 / n).toFixed(1)} µs of it in statements' all()\n`,
  );
  const res = await kiln.capture(computed(sent++), headers);
  const statements = res.statements;
  process.stdout.write(`${url} as ${who}: ${res.status}, ${res.body.length} bytes, ${statements.length} statements\n`);
  let total = 0;
  for (const s of statements) {
    const stmt = file.prepare(s.sql);
    const params = s.parameters;
    const runs = 2_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) stmt.all(...params);
    const us = Number(process.hrtime.bigint() - start) / 1_000 / runs;
    total += us;
    process.stdout.write(
      `${us.toFixed(1).padStart(8)} µs  ${(process.env.FULL_SQL ? s.sql : s.sql.slice(0, 400))}  ${JSON.stringify(params).slice(0, 120)}\n`,
    );
  }
  process.stdout.write(`${total.toFixed(1).padStart(8)} µs  in all\n`);
  await kiln.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
