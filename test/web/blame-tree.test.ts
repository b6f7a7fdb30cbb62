/**
 * The blame page and the tree page's last commits (issue 33): runs of lines per commit with the
 * commit's title escaped, the lines highlighted with their spans closed per line, the blob page's
 * link, the bounds (binary, too many lines), the same 404 for a hidden project as for none, and
 * each tree entry's last commit from one walk of the directory's history.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { highlightedLines } from '../../src/web/components/code.ts';
import { MAX_BLAME_LINES } from '../../src/web/routes/repository/blame.ts';
import { lastCommitsForEntries } from '../../src/domain/repositories/last-commits.ts';

const XSS = '<img src=x onerror=alert(1)>';

describe('web interface: blame and last commits', () => {
  let t: TestApp;
  let p: CiProject;
  let secret: CiProject;
  let owner: Browser;
  let stranger: Browser;
  let first: string;
  let second: string;
  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'blamed', visibility: 'public' });
    secret = await createCiProject(t, { owner: p.owner, name: 'blamed-secret', visibility: 'private' });
    owner = await signedInBrowser(t, p.owner);
    stranger = await signedInBrowser(t, await createUser(t.db));
    first = await pushFiles(t, p, {
      'README.md': 'hello\n',
      'src/a.ts': '/* a comment\n   over two lines */\nconst a = 1;\nconst b = 2;\n',
      'src/keep.ts': 'export {};\n',
      'docs/guide.md': 'guide\n',
      'bin/data.bin': '\u0000\u0001binary',
      [`${XSS}.txt`]: 'named badly\n',
    }, { message: 'First <b>commit</b>' });
    second = await pushFiles(t, p, {
      'src/a.ts': '/* a comment\n   over two lines */\nconst a = 1;\nconst b = "<script>alert(2)</script>";\n',
    }, { message: `Second ${XSS}` });
    await pushFiles(t, secret, { 'README.md': 'secret\n' }, { message: 'Secret title' });
  });
  after(async () => { await t.close(); });

  it('blames a file in runs of lines per commit, escaped and highlighted, linked from the blob page', async () => {
    const blob = await get(`/${p.fullPath}/-/blob/main/src/a.ts`);
    assert.equal(blob.statusCode, 200);
    assert.ok(blob.body.includes(`href="/${p.fullPath}/-/blame/main/src/a.ts" id="blame-link"`));

    const res = await get(`/${p.fullPath}/-/blame/main/src/a.ts`);
    assert.equal(res.statusCode, 200, res.body);
    const runs = res.body.match(/<tr class="blame-run">[\s\S]*?<\/tr>/g) ?? [];
    assert.equal(runs.length, 2, 'three lines of the first commit, then one of the second');
    assert.ok(runs[0]!.includes(`/-/commit/${first}">First &lt;b&gt;commit&lt;/b&gt;</a>`));
    assert.ok(runs[1]!.includes(`/-/commit/${second}">Second &lt;img src=x onerror=alert(1)&gt;</a>`));
    assert.match(runs[0]!, /id="L1">1<\/a><a href="#L2" id="L2">2<\/a><a href="#L3" id="L3">3<\/a>/);
    assert.match(runs[1]!, /id="L4">4</);
    // The comment over two lines is coloured on both, each line's spans closed on that line.
    assert.match(runs[0]!, /<span class="hljs-comment">\/\* a comment<\/span>\n<span class="hljs-comment">   over two lines \*\/<\/span>/);
    assert.ok(!res.body.includes('<script>alert') && !res.body.includes('<img src=x'));
    assert.ok(runs[1]!.includes('&lt;script&gt;alert(2)&lt;/script&gt;'));
    assert.ok(res.body.includes(`href="/${p.fullPath}/-/blob/main/src/a.ts" id="normal-view-link"`));
    assert.ok(!/style=/.test(res.body), 'no inline style the policy would refuse');

    // A file name is text everywhere it shows.
    const named = await get(`/${p.fullPath}/-/blame/main/${encodeURIComponent(`${XSS}.txt`)}`);
    assert.equal(named.statusCode, 200);
    assert.ok(!named.body.includes('<img src=x') && named.body.includes('&lt;img src=x onerror=alert(1)&gt;.txt'));
  });

  it('does not blame binary files, sends directories to the tree and answers 404 for what is not there', async () => {
    const binary = await get(`/${p.fullPath}/-/blame/main/bin/data.bin`);
    assert.equal(binary.statusCode, 200);
    assert.match(binary.body, /id="binary"/);
    const dir = await get(`/${p.fullPath}/-/blame/main/src`);
    assert.equal(dir.statusCode, 302);
    assert.equal(dir.headers.location, `/${p.fullPath}/-/tree/main/src`);
    for (const missing of ['main/nope.ts', 'nope/src/a.ts', 'main']) {
      assert.equal((await get(`/${p.fullPath}/-/blame/${missing}`)).statusCode, 404, missing);
    }
  });

  it('refuses files of more lines than the page blames', async () => {
    const long = await createCiProject(t, { owner: p.owner, name: 'long-file', visibility: 'public' });
    await pushFiles(t, long, { 'long.txt': 'x\n'.repeat(MAX_BLAME_LINES + 1) });
    const res = await get(`/${long.fullPath}/-/blame/main/long.txt`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /id="too-large"/);
    assert.ok(!res.body.includes('blame-run'));
  });

  it('answers a hidden project\'s blame with the same 404 page as a missing project', async () => {
    const missing = await get('/nobody/nothing/-/blame/main/README.md', stranger);
    assert.equal(missing.statusCode, 404);
    for (const b of [stranger, undefined]) {
      const res = await get(`/${secret.fullPath}/-/blame/main/README.md`, b);
      assert.equal(res.statusCode, 404);
      assert.ok(!res.body.includes('Secret title'));
      const none = await get('/nobody/nothing/-/blame/main/README.md', b);
      assert.equal(res.body.replace(/return_to=[^"]*/g, ''), none.body.replace(/return_to=[^"]*/g, ''));
    }
    const mine = await get(`/${secret.fullPath}/-/blame/main/README.md`, owner);
    assert.equal(mine.statusCode, 200);
    assert.ok(mine.body.includes('Secret title'));
  });

  it('shows each tree entry\'s last commit, its title escaped', async () => {
    const root = await get(`/${p.fullPath}/-/tree/main`);
    assert.equal(root.statusCode, 200, root.body);
    const row = (body: string, name: string) => new RegExp(`<tr><td class="name"><a [^>]*>${name}[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';
    assert.ok(row(root.body, 'src/').includes(`/-/commit/${second}">Second &lt;img src=x onerror=alert(1)&gt;</a>`));
    assert.ok(row(root.body, 'docs/').includes(`/-/commit/${first}">First &lt;b&gt;commit&lt;/b&gt;</a>`));
    assert.ok(row(root.body, 'README.md').includes(`/-/commit/${first}"`));
    assert.ok(!root.body.includes('<img src=x'));
    assert.match(root.body, /<th scope="col" class="hide-narrow">Last commit<\/th>/);

    const src = await get(`/${p.fullPath}/-/tree/main/src`);
    assert.equal(src.statusCode, 200);
    assert.ok(row(src.body, 'a.ts').includes(`/-/commit/${second}"`));
    assert.ok(row(src.body, 'keep.ts').includes(`/-/commit/${first}"`));
  });

  it('finds last commits in one walk, and at the commit asked for', async () => {
    const found = await lastCommitsForEntries(p.gitDir, first, 'src', ['src/a.ts', 'src/keep.ts', 'src/none.ts']);
    assert.equal(found.get('src/a.ts')?.id, first, 'as of the first commit, a.ts was last changed there');
    assert.equal(found.get('src/keep.ts')?.title, 'First <b>commit</b>');
    assert.equal(found.has('src/none.ts'), false);
    const later = await lastCommitsForEntries(p.gitDir, second, '', ['src', 'README.md']);
    assert.equal(later.get('src')?.id, second);
    assert.equal(later.get('README.md')?.id, first);
    assert.match(later.get('src')!.committedDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('keeps every highlighted line\'s spans balanced', () => {
    const lines = highlightedLines('/* one\n two\n three */\nconst s = `a\nb`;\n', 'x.ts');
    assert.equal(lines.length, 5);
    for (const l of lines) {
      assert.equal((l.value.match(/<span /g) ?? []).length, (l.value.match(/<\/span>/g) ?? []).length, l.value);
    }
    assert.deepEqual(highlightedLines('<b>\n', 'unknown').map(String), ['&lt;b&gt;']);
  });
});
