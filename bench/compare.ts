/**
 * Two versions of kiln side by side on one seeded database: the work tree and a git revision
 * (checked out in a temporary worktree), each endpoint driven in turns against both, and the
 * server CPU per request of each (median of the rounds), boot to ready, resident memory idle and
 * after the runs printed. Comparing in one run on one database keeps the host's drift out of a change's figure;
 * the A/B figures in README's Performance section come from it.
 *
 *   node bench/compare.ts HEAD~1 '/api/v4/projects/:ci/jobs' '/api/v4/users?per_page=20'
 *   BENCH_ROUNDS=5 BENCH_USERS=100000 BENCH_JOBS=100000 BENCH_TOKEN=user BENCH_DATABASE_URL=postgres://…
 *
 * A path with `{n}` reads a different user id on every request (as the bench's "a new user each
 * request"). Both kilns run with the Node flags of `npm start`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchDatabase } from './bench-database.ts';
import { startKiln, type KilnProcess } from './kiln-process.ts';
import { seedDatabase } from './seed.ts';
import { cpuMicros, median, rssMegabytes } from './measure.ts';

const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';

async function main(): Promise<void> {
  const [rev, ...targets] = process.argv.slice(2);
  if (!rev || targets.length === 0) throw new Error('usage: node bench/compare.ts <git revision> <path> [<path> …]');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const users = Number(process.env.BENCH_USERS ?? 100_000);
  const headers = { 'private-token': process.env.BENCH_TOKEN === 'user' ? USER_TOKEN : ROOT_TOKEN };
  const repo = path.join(import.meta.dirname, '..');
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-compare-'));
  const worktree = path.join(tmp, 'base');
  execFileSync('git', ['-C', repo, 'worktree', 'add', '--detach', '-q', worktree, rev]);
  await fs.symlink(path.join(repo, 'node_modules'), path.join(worktree, 'node_modules'));
  const { url: databaseUrl, drop } = await benchDatabase();
  const kilns: [string, KilnProcess][] = [];
  try {
    const dataDir = path.join(tmp, 'data');
    const { ciProjectId } = await seedDatabase({
      dataDir, databaseUrl, users, jobs: Number(process.env.BENCH_JOBS ?? users), rootToken: ROOT_TOKEN,
      userToken: USER_TOKEN,
    });
    const pkg = JSON.parse(await fs.readFile(path.join(repo, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const nodeFlags = pkg.scripts.start.split(' ').filter((w) => w.startsWith('--'));
    const footprint: string[] = [];
    for (const [name, root] of [[rev, worktree], ['work tree', undefined]] as const) {
      const start = Date.now();
      const k = await startKiln({ dataDir, databaseUrl, nodeFlags, root });
      const boot = Date.now() - start;
      await new Promise((r) => setTimeout(r, 2_000));
      footprint.push(`${name}: boot to ready ${boot} ms, RSS idle ${(await rssMegabytes(k.child.pid!)).toFixed(0)} MB`);
      kilns.push([name, k]);
    }
    const cpu = new Map<string, number[]>();
    const run = async (k: KilnProcess, target: string, seconds: number) => {
      let n = 0;
      const next = () => target.replace('{n}', String(2 + ((Math.floor(users / 2) + n++) % users)));
      return autocannon({
        url: k.base + next(), headers, connections: 10, duration: seconds,
        requests: [{ setupRequest: (req) => ({ ...req, path: next() }) }],
      });
    };
    const paths = targets.map((t) => t.replace(':ci', String(ciProjectId)));
    for (const t of paths) for (const [, k] of kilns) await run(k, t, 1);
    for (let round = 0; round < rounds; round++) {
      for (const t of paths) {
        for (const [name, k] of kilns) {
          const before = await cpuMicros(k.child.pid!);
          const r = await run(k, t, 2);
          const key = `${t}\t${name}`;
          cpu.set(key, [...(cpu.get(key) ?? []), (await cpuMicros(k.child.pid!) - before) / r.requests.total]);
        }
      }
    }
    process.stdout.write(`\nserver CPU µs per request, median of ${rounds} rounds (each round's figure after it)\n`);
    for (const [key, v] of cpu) {
      const [t, name] = key.split('\t');
      process.stdout.write(
        `${t.padEnd(50)} ${name.padEnd(12)} ${median(v).toFixed(0).padStart(6)}   ${v.map((x) => x.toFixed(0)).join(' ')}\n`,
      );
    }
    process.stdout.write(`${footprint.join('\n')}\n`);
    for (const [name, k] of kilns) process.stdout.write(
      `${name}: RSS after the runs ${(await rssMegabytes(k.child.pid!)).toFixed(0)} MB\n`,
    );
  } finally {
    for (const [, k] of kilns) await k.stop();
    await drop?.();
    execFileSync('git', ['-C', repo, 'worktree', 'remove', '--force', worktree]);
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
