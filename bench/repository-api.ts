/**
 * Latency of the repository content API (issue 20, item 6), in process against a fresh kiln
 * (test/helpers/app.ts) on SQLite or BENCH_DATABASE_URL's PostgreSQL: median and p90 of
 * BENCH_ROUNDS (default 30) sequential requests each, after a few warm-up requests. Every write
 * is a real commit made with git plumbing, so the figures are mostly git's process start-ups
 * (one per step); they are printed beside the time of one `git rev-parse` for scale.
 *
 *   node bench/repository-api.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/repository-api.ts
 */
import { execFileSync } from 'node:child_process';
import { startTestApp } from '../test/helpers/app.ts';
import { createToken, createUser } from '../test/helpers/factories.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
if (process.env.BENCH_DATABASE_URL) {
  process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
  process.env.KILN_TEST_DB = 'postgres';
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(1)} ms, p90 ${s[Math.floor(s.length * 0.9)].toFixed(1)} ms`;
}

const t = await startTestApp();
try {
  const user = await createUser(t.db, { username: 'bench' });
  const token = await createToken(t.db, user);
  const project = (await t.request({
    method: 'POST', url: '/api/v4/projects', token, payload: { name: 'bench', initialize_with_readme: true },
  })).json();
  const base = `/api/v4/projects/${project.id}/repository`;
  for (let i = 0; i < 100; i += 1) await t.request({
    method: 'POST', url: `${base}/branches`, token, payload: { branch: `b${i}`, ref: 'main' },
  });

  let n = 0;
  const cases: [string, () => Promise<{ statusCode: number }>, number][] = [
    [
      'POST commits, 1 action',
      () => t.request({
        method: 'POST', url: `${base}/commits`, token,
        payload: { branch: 'main', commit_message: 'm', actions: [{ action: 'create', file_path: `one/${n++}.txt`, content: 'x' }] },
      }),
      201,
    ],
    [
      'POST commits, 10 actions',
      () => t.request({
        method: 'POST', url: `${base}/commits`, token,
        payload: {
          branch: 'main', commit_message: 'm',
          actions: Array.from({ length: 10 }, (_, i) => ({ action: 'create', file_path: `ten/${n}/${i}.txt`, content: String(i) })),
        },
      }).finally(() => { n += 1; }),
      201,
    ],
    [
      'POST branches',
      () => t.request({ method: 'POST', url: `${base}/branches`, token, payload: { branch: `x${n++}`, ref: 'main' } }),
      201,
    ],
    ['GET branches (100+, page of 20)', () => t.request({ method: 'GET', url: `${base}/branches`, token }), 200],
    ['GET files/README.md', () => t.request({ method: 'GET', url: `${base}/files/README.md?ref=main`, token }), 200],
    ['GET tree recursive', () => t.request({ method: 'GET', url: `${base}/tree?recursive=true&per_page=100`, token }), 200],
    ['GET commits (page of 20)', () => t.request({ method: 'GET', url: `${base}/commits`, token }), 200],
  ];
  const gitDir = `${t.dataDir}/repositories/bench/bench.git`;
  const revParse: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const start = performance.now();
    execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'HEAD']);
    revParse.push(performance.now() - start);
  }
  console.log(`engine ${t.dialect}, ${ROUNDS} rounds each`);
  console.log(`one git rev-parse (process start-up): ${stats(revParse)}`);
  for (const [name, fn, code] of cases) {
    for (let i = 0; i < 3; i += 1) await fn();
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const start = performance.now();
      const res = await fn();
      times.push(performance.now() - start);
      if (res.statusCode !== code) throw new Error(`${name}: ${res.statusCode}`);
    }
    console.log(`${name}: ${stats(times)}`);
  }
} finally {
  await t.close();
}
