/**
 * The web interface's heavy pages (issue 33, "Performance"), on the bench database (bench/seed.ts:
 * BENCH_USERS users, BENCH_JOBS jobs; SQLite, or BENCH_DATABASE_URL's PostgreSQL) served in this
 * process (bench/in-process.ts):
 *
 *   project page    /<project>: README rendered, clone URLs, last commit and pipeline, languages
 *   tree page       /<project>/-/tree/main/src: a directory with each entry's last commit
 *   file page       /<project>/-/blob/main/.gitlab-ci.yml: 270 lines highlighted
 *   pipeline page   /<project>/-/pipelines/:id of a 300-job pipeline (290 jobs, 10 bridges to
 *                   child pipelines)
 *   job page        /<project>/-/jobs/:id of a job whose log is 4 MiB of ANSI-coloured lines
 *
 * For each, after a warm-up request, the median and worst over BENCH_ROUNDS (default 20) requests
 * of the server's CPU time (this process's user + system time around the request, and, apart,
 * what the git processes it waited for used: /proc's cutime + cstime, in clock ticks), against
 * the target of 20 ms for both together; the SQL statements of one warm request; and the page
 * weight: its HTML plus every stylesheet and script it references (hashed assets under
 * /-/assets/), against 150 KB.
 *
 *   node_modules/.bin/node bench/web-pages.ts
 *   BENCH_ONLY=project node_modules/.bin/node bench/web-pages.ts   (the pages whose name holds it)
 *   BENCH_COLD=1 …   (every request as the first after a push: nothing read from git is kept)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node_modules/.bin/node bench/web-pages.ts
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';
import { inProcessKiln } from './in-process.ts';
import { seedDatabase } from './seed.ts';
import { createCiProject, pushFiles } from '../test/helpers/ci.ts';
import type { TestApp } from '../test/helpers/app.ts';
import { createSession } from '../test/helpers/factories.ts';
import { findUserByUsername } from '../src/domain/users/users.queries.ts';
import { traceRelPath } from '../src/domain/jobs/job-files.ts';
import { repositoryCache } from '../src/domain/repositories/repository-cache.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const CPU_TARGET_MS = 20;
const WEIGHT_TARGET_BYTES = 150 * 1024;
const LOG_BYTES = 4 * 1024 * 1024;
const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** 29 jobs × a 10-way matrix and 10 bridges to child pipelines: 300 jobs in three stages. */
function pipelineConfig(): string {
  const lines = ['stages: [build, test, deploy]', ''];
  for (let i = 0; i < 29; i++) {
    lines.push(`job-${i}:`, `  stage: ${['build', 'test', 'deploy'][i % 3]}`, '  script: [make]',
      ...(i % 3 !== 0 ? [`  needs: [job-${i - 1}]`] : []),
      '  parallel:', '    matrix:', '      - PROVIDER: [aws, gcp, azure, do, hetzner]', '        ENV: [staging, production]', '');
  }
  for (let i = 0; i < 10; i++) lines.push(`child-${i}:`, '  stage: build', '  trigger:', '    include: child.yml', '');
  return lines.join('\n');
}

/** A runner's log: ANSI-coloured command lines, collapsible sections, plain output. */
function jobLog(): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < LOG_BYTES; i++) {
    const line = i % 500 === 0
      ? `\x1b[0Ksection_start:${1700000000 + i}:step_${i}[collapsed=true]\r\x1b[0K\x1b[36;1mStep ${i}\x1b[0;m\n`
      : i % 500 === 499 ? `\x1b[0Ksection_end:${1700000000 + i}:step_${i - 499}\r\x1b[0K\n`
        : i % 10 === 0 ? `\x1b[32;1m$ make target-${i}\x1b[0;m\n` : `compiling module ${i} of the project: ${'ok '.repeat(20)}\n`;
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  return parts.join('');
}

function childTicks(): number {
  // /proc/self/stat: fields 16 and 17 (cutime, cstime) after the command's closing parenthesis.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[13]) + Number(fields[14]);
}

function stats(values: number[]): { median: number; worst: number } {
  const s = [...values].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, worst: s[s.length - 1]! };
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-web-bench-'));
  const { url: databaseUrl, drop } = await benchDatabase();
  const users = Number(process.env.BENCH_USERS ?? 10_000);
  const jobs = Number(process.env.BENCH_JOBS ?? 10_000);
  await seedDatabase({
    dataDir, databaseUrl, users, jobs, rootToken: 'bench-root-token-0000000001', userToken: 'bench-user-token-0000000001',
  });
  const kiln = await inProcessKiln(dataDir, databaseUrl);
  try {
    const { db, config } = kiln.app.kiln;
    // The test helpers push with the git CLI and record the push as smart HTTP does.
    const t = {
      app: kiln.app, db, config, dataDir, dialect: databaseUrl ? 'postgres' : 'sqlite',
      request: ({ token, headers, ...inject }: { token?: string; headers?: Record<string, string> } & Record<string, unknown>) =>
        kiln.app.inject({ ...inject, headers: { ...(token ? { 'private-token': token } : {}), ...headers } } as never),
    } as unknown as TestApp;
    const root = (await findUserByUsername(db, 'root'))!;
    const p = await createCiProject(t, { owner: root, visibility: 'public', name: 'web-bench' });
    const readme = ['# web-bench', '', 'A project for the page bench.', '',
      ...Array.from({ length: 40 }, (_, i) => `- item ${i} with **bold**, \`code\` and a [link](https://example.com/${i})`)].join('\n');
    await pushFiles(t, p, {
      'README.md': readme, '.gitlab-ci.yml': pipelineConfig(), 'child.yml': 'child-job:\n  script: [make]\n',
      'src/main.ts': 'export const x = 1;\n', 'src/app.rb': 'puts 1\n', 'lib/util.py': 'x = 1\n',
    });
    const created = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });
    if (created.statusCode !== 201) throw new Error(created.body);
    const pipelineId = (created.json() as { id: number }).id;
    // The bridges of the first stage create their child pipelines while the pipeline is processed.
    const deadline = Date.now() + 30_000;
    let linked = 0;
    while (Date.now() < deadline) {
      linked = (await db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipelineId)
        .where('downstream_pipeline_id', 'is not', null).execute()).length;
      if (linked === 10) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const count = (await db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipelineId).execute()).length;
    console.log(`pipeline #${pipelineId}: ${count} jobs, ${linked} bridges with a downstream pipeline`);

    // One finished job with a 4 MiB log, written where the runner's appends put it.
    const job = (await db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).where('type', '=', 'build')
      .orderBy('id').limit(1).executeTakeFirstOrThrow());
    const log = jobLog();
    const file = path.join(config.dataDir, traceRelPath(job));
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, log);
    await db.updateTable('ci_builds').set({ trace_size: Buffer.byteLength(log) }).where('id', '=', job.id).execute();

    const cookie = `_service_session=${await createSession(db, root)}`;
    const pages = [
      { name: 'project page', url: `/${p.fullPath}` },
      { name: 'tree page', url: `/${p.fullPath}/-/tree/main/src` },
      { name: 'file page', url: `/${p.fullPath}/-/blob/main/.gitlab-ci.yml` },
      { name: 'pipeline page (300 jobs)', url: `/${p.fullPath}/-/pipelines/${pipelineId}` },
      { name: 'job page (4 MiB log)', url: `/${p.fullPath}/-/jobs/${job.id}` },
    ];
    for (const page of pages) {
      if (process.env.BENCH_ONLY && !page.name.includes(process.env.BENCH_ONLY)) continue;
      const get = (url: string) => kiln.app.inject({ url, headers: { cookie } });
      const first = await get(page.url);
      if (first.statusCode !== 200) throw new Error(`${page.url}: ${first.statusCode} ${first.body.slice(0, 300)}`);
      const cpu: number[] = [];
      const git: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // BENCH_COLD=1: as the first page after a push, with nothing kept from git (repository-cache.ts).
        if (process.env.BENCH_COLD) repositoryCache.clear();
        const ticks = childTicks();
        const before = process.cpuUsage();
        const res = await get(page.url);
        const used = process.cpuUsage(before);
        git.push((childTicks() - ticks) * CLOCK_TICK_MS);
        if (res.statusCode !== 200) throw new Error(`${page.url}: ${res.statusCode}`);
        cpu.push((used.user + used.system) / 1000);
      }
      // The statements a warm request runs (cached reads answer without one).
      const statements = (await kiln.capture(page.url, { cookie })).statements;
      const assets = [...first.body.matchAll(/<(?:link rel="stylesheet" href|script src)="([^"]+)"/g)].map((m) => m[1]!);
      let assetBytes = 0;
      for (const asset of assets) assetBytes += (await get(asset)).rawPayload.length;
      const htmlBytes = first.rawPayload.length;
      const weight = htmlBytes + assetBytes;
      const c = stats(cpu);
      const g = stats(git);
      console.log(`${page.name}: server CPU median ${c.median.toFixed(1)} ms, worst ${c.worst.toFixed(1)} ms`
        + ` (+ git processes: median ${g.median} ms, worst ${g.worst} ms) — target under ${CPU_TARGET_MS} ms: ${c.median + g.median < CPU_TARGET_MS ? 'meets' : 'MISSES'}`);
      console.log(`${' '.repeat(page.name.length)}  ${statements.length} SQL statements: ${[...new Set(statements.map((st) => st.sql.slice(0, 60)))].join(' | ')}`);
      console.log(`${' '.repeat(page.name.length)}  weight ${(weight / 1024).toFixed(1)} KB (HTML ${(htmlBytes / 1024).toFixed(1)} KB`
        + ` + ${assets.length} assets ${(assetBytes / 1024).toFixed(1)} KB) — target under ${WEIGHT_TARGET_BYTES / 1024} KB: ${weight < WEIGHT_TARGET_BYTES ? 'meets' : 'MISSES'}`);
    }
  } finally {
    await kiln.close();
    await drop?.();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
