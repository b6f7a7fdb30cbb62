/**
 * The GraphQL API's bench item (issue 18): `currentUser { username }` as a share of a bare
 * node:http server, and a page of 20 pipelines with their jobs through one GraphQL request
 * against the REST equivalent (the pipelines page, then each pipeline's jobs: 21 requests).
 *
 *   node bench/graphql.ts                      # SQLite
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/graphql.ts
 *
 * Prints requests (or pages) a second and the ratios; one short run, so on a shared machine the
 * figures say which way things lean, not more.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';
import { startKiln } from './kiln-process.ts';
import autocannon from 'autocannon';
import { openDatabase } from '../src/db/database.ts';
import { seedDatabase } from './seed.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PIPELINES = 20;
const JOBS_PER_PIPELINE = 5;
const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';

function startBare(): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath, [path.join(import.meta.dirname, 'bare-server.ts')],
      { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
}

/** A project of root with PIPELINES pipelines of JOBS_PER_PIPELINE jobs each. */
async function seedPipelines(dataDir: string, databaseUrl: string | null, projectId: number): Promise<void> {
  const database = openDatabase({ dataDir, databaseUrl });
  try {
    const db = database.db;
    const at = new Date('2026-01-01T00:00:00Z').toISOString();
    const source = await db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).executeTakeFirstOrThrow();
    const { id: _id, ...pipeline } = source;
    const options = JSON.stringify({ script: ['make'], before_script: [], after_script: [], image: null, artifacts: null, trigger: null });
    for (let i = 2; i <= PIPELINES + 1; i += 1) {
      const row = await db.insertInto('ci_pipelines').values({
        ...pipeline, iid: i, status: 'success',
      }).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('ci_builds').values(Array.from({ length: JOBS_PER_PIPELINE }, (_, k) => ({
        type: 'build', project_id: projectId, pipeline_id: row.id, name: `job ${k}`, stage: 'test', stage_idx: 0, status: 'success',
        run_when: 'on_success', allow_failure: 0 as const, failure_reason: null, ref: 'main', tag: 0 as const, user_id: 1, runner_id: null,
        token_digest: null, options, yaml_variables: '[]', job_variables: '[]', tag_list: '', needs: null, timeout: 3600,
        downstream_pipeline_id: null, created_at: at, updated_at: at, queued_at: at, started_at: at, finished_at: at,
        erased_at: null, artifacts_expire_at: null,
      }))).execute();
    }
  } finally {
    await database.close();
  }
}

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** CPU time (user + system) a process has used so far, µs (Linux /proc), as bench/run.ts measures it. */
async function cpuMicros(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6;
}

/** Runs `once` from CONNECTIONS workers for DURATION seconds; completed runs a second. */
async function loop(once: () => Promise<void>): Promise<number> {
  const end = Date.now() + DURATION * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (Date.now() < end) {
      await once();
      done += 1;
    }
  }));
  return done / DURATION;
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-bench-gql-'));
  const { url: databaseUrl, drop: drop } = await benchDatabase();
  // The seed's CI project has one pipeline (of 0 jobs here); the bench adds its own 20.
  const { ciProjectId } = await seedDatabase({ dataDir, databaseUrl, users: 100, jobs: 0, rootToken: ROOT_TOKEN, userToken: USER_TOKEN });
  await seedPipelines(dataDir, databaseUrl, ciProjectId);

  const bare = await startBare();
  const kiln = await startKiln({ dataDir, databaseUrl });
  const base = kiln.base;
  try {
    const cpu = new Map<string, number>();
    const headers = { 'private-token': USER_TOKEN, 'content-type': 'application/json' };
    const cannon = async (pid: number, url: string, o: { method?: 'POST'; body?: string; headers?: Record<string, string> } = {}) => {
      await autocannon({ url, connections: CONNECTIONS, duration: 1, ...o });
      const before = await cpuMicros(pid);
      const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, ...o });
      cpu.set(url + (o.body ?? ''), (await cpuMicros(pid) - before) / r['2xx']);
      if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
        throw new Error(`${url}: ${r.non2xx} answers were not 2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      }
      // Answers, not attempts: 2xx responses over the run.
      return r['2xx'] / DURATION;
    };
    const current = JSON.stringify({ query: '{ currentUser { username } }' });
    const probe = await (await fetch(`${base}/api/graphql`, {
      method: 'POST', headers, body: current,
    })).json() as { data?: { currentUser?: { username: string } } };
    if (probe.data?.currentUser?.username !== 'bench0') throw new Error(`currentUser answered ${JSON.stringify(probe)}`);
    const bareRps = await cannon(bare.child.pid!, `http://127.0.0.1:${bare.port}/`);
    const bareCpu = cpu.get(`http://127.0.0.1:${bare.port}/`)!;
    const gqlRps = await cannon(kiln.child.pid!, `${base}/api/graphql`, { method: 'POST', body: current, headers });
    const gqlCpu = cpu.get(`${base}/api/graphql${current}`)!;
    const bareAfter = await cannon(bare.child.pid!, `http://127.0.0.1:${bare.port}/`);
    const bareMean = (bareRps + bareAfter) / 2;

    const admin = { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' };
    const fullPath = 'root/bench-ci';
    const pageQuery = JSON.stringify({ query: `{ project(fullPath: "${fullPath}") { pipelines(first: ${PIPELINES}) { nodes {
      id iid status ref sha createdAt user { username } jobs { nodes { id name status stage { name } duration } } } } } }` });
    const graphqlPage = async () => {
      const res = await fetch(`${base}/api/graphql`, { method: 'POST', headers: admin, body: pageQuery });
      const body = await res.json() as { data: { project: { pipelines: { nodes: unknown[] } } } };
      if (body.data.project.pipelines.nodes.length !== PIPELINES) throw new Error('short GraphQL page');
    };
    const restPage = async () => {
      const res = await fetch(`${base}/api/v4/projects/${ciProjectId}/pipelines?per_page=${PIPELINES}`, { headers: admin });
      const list = await res.json() as { id: number }[];
      await Promise.all(list.map(async (p) => {
        const jobs = await fetch(`${base}/api/v4/projects/${ciProjectId}/pipelines/${p.id}/jobs?per_page=100`, { headers: admin });
        await jobs.arrayBuffer();
      }));
    };
    await loop(graphqlPage);
    const gqlPages = await loop(graphqlPage);
    await loop(restPage);
    const restPages = await loop(restPage);

    const engine = databaseUrl ? 'PostgreSQL' : 'SQLite';
    process.stdout.write([
      `engine: ${engine}; ${CONNECTIONS} connections, ${DURATION} s a run, one run (shared machine: figures move by ten points or more)`,
      `bare node:http                           ${bareMean.toFixed(0)} req/s`,
      `POST /api/graphql { currentUser }         ${gqlRps.toFixed(0)} req/s  = ${((gqlRps / bareMean) * 100).toFixed(1)} % of `
      + `bare (target ≥ 25 %)`,
      `  server CPU per request: bare ${bareCpu.toFixed(0)} µs, GraphQL ${gqlCpu.toFixed(0)} µs = `
      + `${((bareCpu / gqlCpu) * 100).toFixed(1)} % of bare by CPU`,
      `${PIPELINES} pipelines × ${JOBS_PER_PIPELINE} jobs, GraphQL (1 request) ${gqlPages.toFixed(1)} pages/s`,
      `${PIPELINES} pipelines × ${JOBS_PER_PIPELINE} jobs, REST (21 requests)   ${restPages.toFixed(1)} pages/s  → GraphQL `
      + `${(gqlPages / restPages).toFixed(2)}× REST`,
      '',
    ].join('\n'));
  } finally {
    await kiln.stop();
    bare.child.kill('SIGTERM');
    if (drop) await drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
