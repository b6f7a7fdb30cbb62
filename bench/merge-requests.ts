/**
 * Merge requests on a real repository (issue 30, "Measure"), in process against a fresh kiln
 * (test/helpers/app.ts) on SQLite or BENCH_DATABASE_URL's PostgreSQL, its repository in a temp
 * dir. Times, after a warm-up request, median and worst of BENCH_ROUNDS (default 5) requests:
 *
 * - GET /projects/:id/merge_requests/:iid/changes of a request whose diff touches 1,000 files
 *   (the Service's file limit; target: under 300 ms);
 * - PUT /projects/:id/merge_requests/:iid/merge of a 100-commit source branch into a target that
 *   moved on (a real merge commit; one request per round, each its own branch; target: under 500 ms).
 *
 * The branches are written straight into the bare repository with `git fast-import` (building
 * them through the API would time kiln's commit route, not these). Each git step kiln takes is a
 * process start-up; one `git rev-parse` is printed for scale.
 *
 *   node_modules/.bin/node bench/merge-requests.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node_modules/.bin/node bench/merge-requests.ts
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startTestApp } from '../test/helpers/app.ts';
import { createToken, createUser } from '../test/helpers/factories.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const FILES = 1000;
const COMMITS = 100;
if (process.env.BENCH_DATABASE_URL) {
  process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
  process.env.KILN_TEST_DB = 'postgres';
}

function stats(ms: number[]): { median: number; worst: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], worst: s[s.length - 1] };
}

function report(name: string, ms: number[], target: number): void {
  const { median, worst } = stats(ms);
  const verdict = median < target ? 'meets' : 'MISSES';
  console.log(`${name}: median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms (${ms.map((m) => m.toFixed(0)).join(', ')}) `
    + `— target under ${target} ms: ${verdict}`);
}

const t = await startTestApp();
try {
  const user = await createUser(t.db, { username: 'bench', name: 'Bench', email: 'bench@example.com' });
  const token = await createToken(t.db, user);
  const project = (await t.request({
    method: 'POST', url: '/api/v4/projects', token, payload: { name: 'bench', initialize_with_readme: true },
  })).json() as { id: number };
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  const gitDir = path.join(t.dataDir, 'repositories', row.disk_path);
  const git = (args: string[], input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], {
    encoding: 'utf8', input, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
  const mrs = `/api/v4/projects/${project.id}/merge_requests`;

  // One fast-import stream: `wide` (one commit adding 1,000 files of ten lines each off main) and
  // ROUNDS + 1 branches `long-n` of 100 commits each (every commit one new file), then a commit on
  // main so that each merge makes a merge commit over a target that moved on.
  const main = git(['rev-parse', 'refs/heads/main']);
  const stamp = 'Bench <bench@example.com> 1767225600 +0000';
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let stream = `commit refs/heads/wide\ncommitter ${stamp}\n${data('Touch 1,000 files')}from ${main}\n`;
  for (let f = 0; f < FILES; f += 1) {
    const body = Array.from({ length: 10 }, (_, l) => `file ${f} line ${l}\n`).join('');
    stream += `M 100644 inline src/dir${f % 20}/file${f}.txt\n${data(body)}`;
  }
  for (let b = 0; b <= ROUNDS; b += 1) {
    for (let c = 0; c < COMMITS; c += 1) {
      stream += `commit refs/heads/long-${b}\ncommitter ${stamp}\n${data(`Commit ${c} of long-${b}`)}`;
      if (c === 0) stream += `from ${main}\n`;
      stream += `M 100644 inline long-${b}/commit${c}.txt\n${data(`commit ${c}\n`)}`;
    }
  }
  stream += `commit refs/heads/main\ncommitter ${stamp}\n${data('Main moves on')}from ${main}\nM 100644 inline MAIN.txt\n${data('main\n')}`;
  git(['fast-import', '--quiet'], stream);

  const open = async (source: string): Promise<number> => {
    const payload = { source_branch: source, target_branch: 'main', title: source };
    const res = await t.request({ method: 'POST', url: mrs, token, payload });
    if (res.statusCode !== 201) throw new Error(`opening ${source}: ${res.statusCode} ${res.body}`);
    return (res.json() as { iid: number }).iid;
  };
  /** Waits for the background mergeability check, as a client polling merge_status would. */
  const checked = async (iid: number) => {
    for (let i = 0; i < 400; i += 1) {
      const status = (await t.request({ method: 'GET', url: `${mrs}/${iid}`, token })).json().merge_status as string;
      if (status === 'can_be_merged') return;
      if (status === 'cannot_be_merged') throw new Error(`!${iid} cannot be merged`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`!${iid}: merge status never checked`);
  };

  const revParse: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const start = performance.now();
    git(['rev-parse', 'HEAD']);
    revParse.push(performance.now() - start);
  }
  console.log(`engine ${t.dialect}, ${ROUNDS} rounds each; one git rev-parse (process start-up): median ${stats(revParse).median.toFixed(1)} ms`);

  const wide = await open('wide');
  const changes: number[] = [];
  for (let i = 0; i <= ROUNDS; i += 1) {
    const start = performance.now();
    const res = await t.request({ method: 'GET', url: `${mrs}/${wide}/changes`, token });
    const ms = performance.now() - start;
    const body = res.json() as { changes: unknown[]; overflow: boolean };
    if (res.statusCode !== 200 || body.changes.length !== FILES || body.overflow) {
      throw new Error(`changes: ${res.statusCode}, ${body.changes?.length} files, overflow ${body.overflow}`);
    }
    if (i > 0) changes.push(ms); // the first one warms up
  }
  report(`GET …/merge_requests/:iid/changes (${FILES} files, ${(Buffer.byteLength(JSON.stringify(
    (await t.request({ method: 'GET', url: `${mrs}/${wide}/changes`, token })).json(),
  )) / 1024).toFixed(0)} KiB)`, changes, 300);

  const merges: number[] = [];
  for (let b = 0; b <= ROUNDS; b += 1) {
    const iid = await open(`long-${b}`);
    await checked(iid);
    const start = performance.now();
    const res = await t.request({ method: 'PUT', url: `${mrs}/${iid}/merge`, token, payload: {} });
    const ms = performance.now() - start;
    if (res.statusCode !== 200 || res.json().state !== 'merged') throw new Error(`merge of long-${b}: ${res.statusCode} ${res.body}`);
    if (b > 0) merges.push(ms); // the first one warms up
  }
  const parents = git(['rev-list', '--parents', '-n', '1', 'refs/heads/main']).split(' ').length - 1;
  if (parents !== 2) throw new Error(`main's head has ${parents} parents, not a merge commit`);
  report(`PUT …/merge_requests/:iid/merge (${COMMITS} commits, merge commit)`, merges, 500);
} finally {
  await t.close();
}
