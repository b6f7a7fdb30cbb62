/**
 * Every entry of a tree page has its last commit (issue 33): a directory of 160+ entries each
 * added by its own commit, under 300 later commits to one busy file, shows each entry's own
 * commit from one `git log` walk, and none when asked again (remembered per commit); names with
 * pathspec magic (`*`, `[x]`) are names; a directory of 1,050 entries is shown 1,000 at a time,
 * the next page with its own last commits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import childProcess, { execFileSync } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { TREE_PAGE_ENTRIES } from '../../src/web/routes/repository/files.ts';

const FILES = 160;
const BUSY = 300;
const WIDE = TREE_PAGE_ENTRIES + 50;

/** `commits` appended to `branch` of a bare repository with git fast-import, a second apart. */
function appendCommits(gitDir: string, branch: string, commits: { message: string; files: Record<string, string> }[]): void {
  const from = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', `refs/heads/${branch}`], { encoding: 'utf8' }).trim();
  const start = Math.floor(Date.parse('2026-01-01T00:00:00Z') / 1000);
  const parts: string[] = [];
  commits.forEach((c, i) => {
    const message = Buffer.from(c.message);
    parts.push(`commit refs/heads/${branch}\ncommitter Ada <ada@example.com> ${start + i} +0000\ndata ${message.length}\n${c.message}\n`);
    if (i === 0) parts.push(`from ${from}\n`);
    for (const [name, content] of Object.entries(c.files)) {
      parts.push(`M 100644 inline ${name}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    }
  });
  execFileSync('git', ['--git-dir', gitDir, 'fast-import', '--quiet'], { input: parts.join('') });
}

/** Each row of a tree page: the entry's name and its last commit's title ('' for none). */
function rows(body: string): { name: string; title: string }[] {
  return [...body.matchAll(/<tr><td class="name">([\s\S]*?)<\/tr>/g)].map(([row]) => ({
    name: /<a [^>]*>([^<]*)<\/a><\/td>/.exec(row)?.[1] ?? '',
    title: /\/-\/commit\/[0-9a-f]{40}">([^<]*)<\/a>/.exec(row)?.[1] ?? '',
  }));
}

describe('tree pages: every entry\'s last commit, a page of entries at a time', () => {
  let t: TestApp;
  let p: CiProject;
  /** The `git log` processes started while counting. */
  let logs: string[][] | null = null;
  const spawn = childProcess.spawn;

  before(async () => {
    // Counts the walks a page starts: kiln spawns git through node:child_process.
    childProcess.spawn = ((command: string, args: readonly string[], ...rest: unknown[]) => {
      if (logs && command === 'git' && args.includes('log')) logs.push([...args]);
      return (spawn as (...a: unknown[]) => ReturnType<typeof spawn>)(command, args, ...rest);
    }) as typeof spawn;
    syncBuiltinESMExports();
    t = await startTestApp();
    p = await createCiProject(t, { name: 'wide-tree', visibility: 'public' });
    await pushFiles(t, p, { 'README.md': 'tree\n' }, { message: 'Initial' });
    const commits: { message: string; files: Record<string, string> }[] = [];
    for (let i = 0; i < FILES; i++) commits.push({ message: `add f${i}`, files: { [`many/f${String(i).padStart(3, '0')}.txt`]: `${i}\n` } });
    commits.push({ message: 'add star', files: { 'many/*': 'star\n' } });
    commits.push({ message: 'add bracket', files: { 'many/[x].txt': 'bracket\n' } });
    const wide = (from: number, to: number) => Object.fromEntries(
      Array.from({ length: to - from }, (_, i) => [`wide/w${String(from + i).padStart(4, '0')}.txt`, `${from + i}\n`]),
    );
    commits.push({ message: 'wide one', files: wide(0, WIDE / 2) });
    commits.push({ message: 'wide two', files: wide(WIDE / 2, WIDE) });
    for (let i = 0; i < BUSY; i++) commits.push({ message: `busy ${i}`, files: { 'many/busy.txt': `${i}\n` } });
    appendCommits(p.gitDir, 'main', commits);
  });
  after(async () => {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
    await t.close();
  });

  it('gives each of 160+ entries its own last commit, past a busy file\'s history, in one walk', async () => {
    logs = [];
    const res = await t.request({ url: `/${p.fullPath}/-/tree/main/many` });
    const walks = logs;
    logs = null;
    assert.equal(res.statusCode, 200, res.body);
    const listed = rows(res.body);
    assert.equal(listed.length, FILES + 3);
    const byName = new Map(listed.map((r) => [r.name, r.title]));
    for (let i = 0; i < FILES; i++) assert.equal(byName.get(`f${String(i).padStart(3, '0')}.txt`), `add f${i}`, `f${i}`);
    assert.equal(byName.get('busy.txt'), `busy ${BUSY - 1}`);
    assert.equal(byName.get('*'), 'add star', 'a name with a wildcard is that name only');
    assert.equal(byName.get('[x].txt'), 'add bracket');
    assert.equal(walks.length, 1, 'one git log walk for the page');
    assert.ok(!res.body.includes('rel="next"'), 'one page');

    // Asked again, the answers come from memory: no walk at all.
    logs = [];
    assert.equal(rows((await t.request({ url: `/${p.fullPath}/-/tree/main/many` })).body).filter((r) => r.title === '').length, 0);
    assert.equal(logs.length, 0);
    logs = null;
  });

  it('shows a directory of more than 1,000 entries a page at a time, each page with its last commits', async () => {
    const base = `/${p.fullPath}/-/tree/main/wide`;
    const first = await t.request({ url: base });
    assert.equal(first.statusCode, 200);
    const one = rows(first.body);
    assert.equal(one.length, TREE_PAGE_ENTRIES);
    assert.equal(one[0]!.name, 'w0000.txt');
    assert.ok(one.every((r, i) => r.title === (i < WIDE / 2 ? 'wide one' : 'wide two')), 'every shown entry has its commit');
    assert.match(first.body, new RegExp(`id="tree-range">Entries 1–${TREE_PAGE_ENTRIES} of ${WIDE}<`));
    assert.ok(first.body.includes(`href="${base}?page=2" rel="next"`));

    const second = await t.request({ url: `${base}?page=2` });
    assert.equal(second.statusCode, 200);
    const two = rows(second.body);
    assert.equal(two.length, WIDE - TREE_PAGE_ENTRIES);
    assert.equal(two[0]!.name, `w${TREE_PAGE_ENTRIES}.txt`);
    assert.ok(two.every((r) => r.title === 'wide two'));
    assert.ok(second.body.includes(`href="${base}?page=1" rel="prev"`) && !second.body.includes('rel="next"'));

    assert.equal((await t.request({ url: `${base}?page=3` })).statusCode, 404, 'no page past the entries');
    for (const page of ['0', '-1', 'x', '99999999999']) {
      assert.equal(rows((await t.request({ url: `${base}?page=${page}` })).body).length, TREE_PAGE_ENTRIES, `page=${page} is the first page`);
    }
  });
});
