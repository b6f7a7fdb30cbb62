/**
 * Where one endpoint's server time goes: seeds a database as the bench does, starts kiln under
 * V8's sampling profiler, drives the endpoint with autocannon for a few seconds, and prints the
 * functions with the most self time and the files they live in.
 *
 *   node bench/profile.ts '/api/v4/users?per_page=20' [root|user]   # PROFILE_SECONDS=5, BENCH_USERS=10000, BENCH_JOBS=10000
 *   PROFILE_COMPUTED=1 node bench/profile.ts …   # every request a new URL: a list's page computed, not remembered
 *   node bench/profile.ts '/api/v4/users/{n}' user   # a different user on every request (nothing remembered)
 *
 * The profile itself (a .cpuprofile Chrome's DevTools opens) is kept in the printed directory.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchDatabase } from './bench-database.ts';
import { startKiln } from './kiln-process.ts';
import { seedDatabase } from './seed.ts';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const ROOT_TOKEN = 'bench-root-token-0000000001';
const USER_TOKEN = 'bench-user-token-0000000001';

async function main(): Promise<void> {
  const [target = '/api/v4/users?per_page=20', who = 'root'] = process.argv.slice(2);
  const seconds = Number(process.env.PROFILE_SECONDS ?? 5);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-profile-'));
  const { url: databaseUrl, drop } = await benchDatabase();
  const { ciProjectId } = await seedDatabase({
    dataDir, databaseUrl, users: Number(process.env.BENCH_USERS ?? 10_000), jobs: Number(process.env.BENCH_JOBS ?? 10_000),
    issues: Number(process.env.BENCH_ISSUES ?? 10_000), mergeRequests: Number(process.env.BENCH_MERGE_REQUESTS ?? 10_000),
    rootToken: ROOT_TOKEN, userToken: USER_TOKEN,
  });
  const url = target.replace(':ci', String(ciProjectId));
  const profDir = path.join(dataDir, 'profile');
  const kiln = await startKiln({ dataDir, databaseUrl, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] });
  const base = kiln.base;
  const headers = { 'private-token': who === 'user' ? USER_TOKEN : ROOT_TOKEN };
  const probe = await fetch(base + url.replace('{n}', '2'), { headers });
  if (!probe.ok) throw new Error(`${url}: ${probe.status} ${await probe.text()}`);
  // Lists remember whole answers (src/http/lists/remembered-pages.ts); a parameter the API ignores,
  // different on every request, has each page computed instead.
  // `{n}` in the path: a different seeded user id on every request (as bench/compare.ts).
  let n = 0;
  const users = Number(process.env.BENCH_USERS ?? 10_000);
  const next = url.includes('{n}')
    ? () => url.replace('{n}', String(2 + ((Math.floor(users / 2) + n++) % users)))
    : process.env.PROFILE_COMPUTED === '1' ? () => `${url}${url.includes('?') ? '&' : '?'}bench=${n++}` : null;
  const requests = next ? [{ setupRequest: (req: object) => ({ ...req, path: next() }) }] : undefined;
  const r = await autocannon({ url: base + url, headers, connections: 10, duration: seconds, requests });
  process.stdout.write(`${url} as ${who}: ${r.requests.total} requests, ${r.requests.average} req/s\n`);
  await kiln.stop();
  const [file] = await fs.readdir(profDir);
  const profile = JSON.parse(await fs.readFile(path.join(profDir, file), 'utf8')) as Profile;
  report(profile, r.requests.total);
  process.stdout.write(`profile: ${path.join(profDir, file)}\n`);
  await drop?.();
}

function report(profile: Profile, requests: number): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    total += us;
    const file = url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '') || functionName;
    const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    const area = file.startsWith('node_modules/') ? file.split('/').slice(0, file.startsWith('node_modules/@') ? 3 : 2).join('/') : file;
    files.set(area, (files.get(area) ?? 0) + us);
  }
  // Inclusive time of kiln's own functions: each sample counts once for every distinct src/
  // function on its stack (a function on the stack twice counts once).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = byId.get(at)!.callFrame;
      if (!url.includes('/src/')) continue;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '')}:${lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `${(us / requests).toFixed(1).padStart(8)} µs/req ${((us / total) * 100).toFixed(1).padStart(5)} %  ${k}`).join('\n');
  process.stdout.write(
    `busy ${(total / requests).toFixed(1)} µs of CPU per request (main thread)\n\nby file or package:\n${top(files, 25)}\n\nby `
    + `function:\n${top(fns, 40)}\n\nkiln's functions, inclusive:\n${top(inclusive, 40)}\n`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
