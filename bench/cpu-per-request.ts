/**
 * Server CPU time per request, the steadier companion of bench/run.ts: throughput on a 2-core
 * machine that also runs the load generator swings by ±20 % between runs, while the CPU a server
 * process spends on a fixed number of requests moves by a few µs. Starts kiln and the bare
 * node:http server as child processes, sends each endpoint a fixed number of requests, reads the
 * child's user+system time from /proc (Linux), and prints µs per request and the ratio of the
 * bare server's cost to each endpoint's.
 *
 *   node bench/cpu-per-request.ts            # 40,000 requests per endpoint, 100k seeded users
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { seedDatabase } from './seed.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40_000);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';
const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

async function cpuMicros(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6;
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

async function perRequest(child: ChildProcess, url: string, headers: Record<string, string> = {}): Promise<number> {
  await autocannon({ url, headers, connections: 10, amount: Math.ceil(REQUESTS / 4) });
  const before = await cpuMicros(child.pid!);
  const r = await autocannon({ url, headers, connections: 10, amount: REQUESTS });
  const after = await cpuMicros(child.pid!);
  if (r.non2xx > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers`);
  return (after - before) / REQUESTS;
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-cpu-'));
  await seedDatabase({ dataDir, databaseUrl: null, users: USERS, jobs: 0, rootToken: ROOT_TOKEN, userToken: USER_TOKEN });
  const barePort = 20000 + Math.floor(Math.random() * 10000);
  const kilnPort = barePort + 10000;
  const bare = spawn(process.execPath, [path.join(import.meta.dirname, 'bare-server.ts')], { env: { ...process.env, PORT: String(barePort) }, stdio: 'ignore' });
  const kiln = spawn(process.execPath, [path.join(import.meta.dirname, '..', 'src', 'main.ts'), 'serve'], {
    env: {
      ...process.env, PORT: String(kilnPort), KILN_DATA_DIR: dataDir, LOG_LEVEL: 'warn', KILN_RATE_LIMIT_PER_IP: '0',
      KILN_RATE_LIMIT_PER_USER: '0', KILN_CI_SWEEP_INTERVAL: '0', KILN_EXTERNAL_URL: `http://127.0.0.1:${kilnPort}`,
    },
    stdio: 'ignore',
  });
  try {
    await waitFor(`http://127.0.0.1:${barePort}/`);
    await waitFor(`http://127.0.0.1:${kilnPort}/-/liveness`);
    const base = await perRequest(bare, `http://127.0.0.1:${barePort}/`);
    const k = `http://127.0.0.1:${kilnPort}`;
    const mid = Math.floor(USERS / 2) + 2;
    const rows: [string, number][] = [
      ['GET /-/liveness', await perRequest(kiln, `${k}/-/liveness`)],
      ['GET /api/v4/users/:id (user token)', await perRequest(kiln, `${k}/api/v4/users/${mid}`, { 'private-token': USER_TOKEN })],
      ['GET /api/v4/user (admin)', await perRequest(kiln, `${k}/api/v4/user`, { 'private-token': ROOT_TOKEN })],
    ];
    console.log(`server CPU per request, ${REQUESTS} requests each (${os.cpus().length} cores)`);
    console.log(`| endpoint | µs/request | bare's cost as a share |`);
    console.log(`| --- | --- | --- |`);
    console.log(`| bare node:http | ${base.toFixed(1)} | 100 % |`);
    for (const [name, micros] of rows) console.log(`| ${name} | ${micros.toFixed(1)} | ${((base / micros) * 100).toFixed(0)} % |`);
  } finally {
    kiln.kill('SIGTERM');
    bare.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
