/**
 * Storage-move throughput against a plain `cp -a` of the same repositories (issue 7: target
 * ≥ 50 %). Builds one packed repository of random content (BENCH_REPO_MB, default 8 MB, in ten
 * commits), gives it to BENCH_REPOS projects (default 16) of a running `kiln serve` on shard
 * `default`, then times:
 *
 *   cp -a        each repository copied to the other shard by one `cp -a`, one after another
 *                (the bare minimum of a move: one copy per repository), and with kiln's worker
 *                concurrency (KILN_JOB_CONCURRENCY, default 4) copies at a time;
 *   kiln move    POST /project_repository_storage_moves until every move is `finished`: copy,
 *                verification (refs, fsck connectivity), rename, storage switch in the
 *                database, removal of the source, and the state changes of each move.
 *
 *   node bench/storage-moves.ts
 *   BENCH_REPOS=32 BENCH_REPO_MB=4 BENCH_ROUNDS=7 node bench/storage-moves.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/storage-moves.ts
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database.ts';

const run = promisify(execFile);
const REPOS = Number(process.env.BENCH_REPOS ?? 16);
const REPO_MB = Number(process.env.BENCH_REPO_MB ?? 8);
const CONCURRENCY = Number(process.env.KILN_JOB_CONCURRENCY ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TOKEN = 'bench-storage-moves-token-0001';
const gitEnv = {
  ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
};

async function template(dir: string): Promise<string> {
  const work = path.join(dir, 'work');
  await run('git', ['init', '--quiet', '--initial-branch=main', work], { env: gitEnv });
  const files = 40;
  for (let c = 0; c < 10; c++) {
    for (let f = 0; f < files; f++) {
      await fs.writeFile(path.join(work, `f${f}.bin`), crypto.randomBytes(Math.floor((REPO_MB * 1024 * 1024) / (10 * files))));
    }
    await run('git', ['-C', work, 'add', '.'], { env: gitEnv });
    await run('git', ['-C', work, 'commit', '--quiet', '-m', `commit ${c}`], { env: gitEnv });
  }
  await run('git', ['-C', work, 'tag', 'v1'], { env: gitEnv });
  const bare = path.join(dir, 'template.git');
  await run('git', ['clone', '--quiet', '--bare', work, bare], { env: gitEnv });
  await run('git', ['--git-dir', bare, 'gc', '--quiet'], { env: gitEnv });
  return bare;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-bench-moves-'));
  const shards = { default: path.join(dir, 'default'), b: path.join(dir, 'b') };
  await fs.mkdir(shards.default);
  await fs.mkdir(shards.b);
  const { url: databaseUrl, drop: drop } = await benchDatabase();
  const port = 20000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  const kiln = spawn(process.execPath, [path.join(import.meta.dirname, '..', 'src', 'main.ts'), 'serve'], {
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), KILN_SSH_PORT: '0', KILN_EXTERNAL_URL: base,
      KILN_DATA_DIR: path.join(dir, 'data'),
      KILN_STORAGES: `default=${shards.default},b=${shards.b}`, KILN_ROOT_TOKEN: TOKEN, KILN_ROOT_PASSWORD: 'bench-password-1234',
      KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '0', LOG_LEVEL: 'warn', KILN_JOB_POLL_MS: '20',
      KILN_JOB_CONCURRENCY: String(CONCURRENCY), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const api = async (method: string, url: string, body?: object) => {
    const r = await fetch(`${base}/api/v4${url}`, {
      method, headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return r.json() as Promise<any>;
  };
  try {
    for (let i = 0; i < 200; i++) {
      if (await fetch(`${base}/-/readiness`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    process.stdout.write(`building ${REPOS} repositories of ${REPO_MB} MB…\n`);
    const bare = await template(dir);
    const repos: string[] = [];
    for (let i = 0; i < REPOS; i++) {
      const p = await api('POST', '/projects', { name: `bench-${i}`, path: `bench-${i}` });
      const repo = path.join(shards.default, 'root', `bench-${i}.git`);
      await fs.rm(repo, { recursive: true, force: true });
      await run('cp', ['-a', bare, repo]);
      repos.push(repo);
      if (!p.id) throw new Error(`project not created: ${JSON.stringify(p)}`);
    }
    const { stdout } = await run('du', ['-sb', shards.default]);
    const bytes = Number(stdout.split('\t')[0]);
    // The machine may be shared: several rounds, alternating directions, and the median of each.
    const results = { cpSequential: [] as number[], cpParallel: [] as number[], move: [] as number[] };
    let from: 'default' | 'b' = 'default';
    for (let round = 0; round < ROUNDS; round++) {
      const to: 'default' | 'b' = from === 'default' ? 'b' : 'default';
      const current = repos.map((r) => path.join(shards[from], path.relative(shards.default, r)));
      const scratch = path.join(shards[to], 'cp-baseline');
      await fs.mkdir(scratch);
      results.cpSequential.push(await timed(async () => {
        for (const [i, r] of current.entries()) await run('cp', ['-a', r, path.join(scratch, `s${i}.git`)]);
      }));
      await fs.rm(scratch, { recursive: true, force: true });
      await fs.mkdir(scratch);
      results.cpParallel.push(
        await timed(
          () => inBatches([...current.entries()], CONCURRENCY, ([i, r]) => run('cp', ['-a', r, path.join(scratch, `p${i}.git`)])),
        ),
      );
      await fs.rm(scratch, { recursive: true, force: true });
      const done = (round + 1) * REPOS;
      results.move.push(await timed(async () => {
        await api('POST', '/project_repository_storage_moves', { source_storage_name: from, destination_storage_name: to });
        for (;;) {
          const list = await api('GET', `/project_repository_storage_moves?per_page=${REPOS}`) as { state: string }[];
          if (list.some((m) => m.state === 'failed' || m.state === 'cleanup_failed')) {
            throw new Error(`a move failed: ${JSON.stringify(list)}`);
          }
          const total = Number(
            (await fetch(
              `${base}/api/v4/project_repository_storage_moves?per_page=1`,
              { headers: { 'private-token': TOKEN } },
            )).headers.get('x-total'),
          );
          if (total === done && list.every((m) => m.state === 'finished')) break;
          // Polled gently: the list request competes with the workers for the same process.
          await new Promise((r) => setTimeout(r, 50));
        }
      }));
      from = to;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cpSequential = median(results.cpSequential);
    const cpParallel = median(results.cpParallel);
    const move = median(results.move);
    const mbps = (sec: number) => (bytes / 1024 / 1024 / sec).toFixed(1);
    const rows = [
      ['cp -a, one repository at a time', cpSequential],
      [`cp -a, ${CONCURRENCY} at a time`, cpParallel],
      [`kiln bulk move (${CONCURRENCY} workers, ${databaseUrl ? 'PostgreSQL' : 'SQLite'})`, move],
    ] as const;
    process.stdout.write(`\n${REPOS} repositories, ${(bytes / 1024 / 1024).toFixed(1)} MB in all; median of ${ROUNDS} rounds\n`);
    process.stdout.write(`${'what'.padEnd(48)} ${'seconds'.padStart(8)} ${'MB/s'.padStart(8)} ${'repos/s'.padStart(8)}\n`);
    for (const [name, sec] of rows) {
      process.stdout.write(
        `${name.padEnd(48)} ${sec.toFixed(2).padStart(8)} ${mbps(sec).padStart(8)} ${(REPOS / sec).toFixed(1).padStart(8)}\n`,
      );
    }
    process.stdout.write(`\nmove throughput / cp -a (one at a time): ${((cpSequential / move) * 100).toFixed(0)} %   (target ≥ 50 %)\n`);
    process.stdout.write(`move throughput / cp -a (${CONCURRENCY} at a time): ${((cpParallel / move) * 100).toFixed(0)} %\n`);
  } finally {
    kiln.kill('SIGTERM');
    await new Promise((r) => kiln.once('exit', r));
    await drop?.();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
