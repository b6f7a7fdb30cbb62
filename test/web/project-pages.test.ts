/**
 * A project's pages at the HTTP boundary (issue 33): the overview (README through the API's
 * sanitising Markdown renderer, clone URLs, last commit and its pipeline, languages) and the
 * repository pages, with what readers without code access may not see left out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { createUser } from '../helpers/factories.ts';

describe('web interface: project pages', () => {
  let t: TestApp;
  let p: CiProject;
  let owner: Browser;
  let sha: string;
  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'web-project', visibility: 'public' });
    owner = await signedInBrowser(t, p.owner);
    sha = await pushFiles(t, p, {
      'README.md': '# Hello <script>alert(1)</script>\n\n[x](javascript:alert(2)) <img src=x onerror=alert(3)>\n\n* item\n',
      'src/main.ts': 'export const answer: number = 42;\n',
      '.gitlab-ci.yml': 'test:\n  script: echo hi\n',
    }, { message: 'First <b>commit</b>\n\nbody' });
    await createPipeline(t, p);
  });
  after(async () => { await t.close(); });

  it('renders the overview: README sanitised, clone URLs, last commit with its pipeline, languages', async () => {
    const res = await get(`/${p.fullPath}`);
    assert.equal(res.statusCode, 200);
    const body = res.body;
    assert.match(body, /<h1>web-project<\/h1>/);
    assert.ok(body.includes(`value="${t.config.externalUrl}/${p.fullPath}.git"`), 'HTTP clone URL');
    assert.match(body, /<section id="readme">/);
    assert.match(body, /<h1[^>]*>.*Hello/);
    assert.doesNotMatch(body, /<script>alert|javascript:alert|onerror=/);
    assert.match(body, /First &lt;b&gt;commit&lt;\/b&gt;/);
    assert.ok(body.includes(`/-/commit/${sha}`));
    assert.match(body, /status-(pending|created|running)/);
    assert.match(body, /id="languages"/);
    assert.match(body, /TypeScript/);
    assert.match(body, /<script src="\/-\/assets\/copy-[0-9a-f]{16}\.js" defer><\/script>/);
    assert.match(body, /<nav class="sidebar" aria-label="Project">/);
  });

  it('leaves the code out for readers without download_code, and shows an empty repository as such', async () => {
    const updated = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { repository_access_level: 'private', merge_requests_access_level: 'private', builds_access_level: 'private' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const anonymous = await get(`/${p.fullPath}`);
    assert.equal(anonymous.statusCode, 200);
    assert.doesNotMatch(anonymous.body, /clone-http|id="readme"|id="last-commit"/);
    assert.match((await get(`/${p.fullPath}`, owner)).body, /id="readme"/);
    await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { repository_access_level: 'enabled' } });

    const empty = await createCiProject(t, { name: 'empty-project', visibility: 'public' });
    const res = await get(`/${empty.fullPath}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /id="empty-repository"/);
  });
});

describe('web interface: repository pages', () => {
  let t: TestApp;
  let p: CiProject;
  let sha: string;
  const get = (url: string) => t.request({ url });

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'repo-pages', visibility: 'public' });
    await pushFiles(t, p, { 'README.md': 'first\n' }, { message: 'Start' });
    sha = await pushFiles(t, p, {
      'src/app.ts': 'const x = "<script>alert(1)</script>";\n// "><img src=x onerror=alert(2)>\n',
      'bin/data.bin': '\u0000\u0001binary',
      'README.md': 'second\n',
    }, { message: '<img src=x onerror=alert(3)> title\n\n<script>alert(4)</script> body' });
    await pushFiles(t, p, { 'feature.txt': 'on a branch\n' }, { branch: 'feature/deep', tag: 'v1.0' });
  });
  after(async () => { await t.close(); });

  it('lists a directory, at a ref with a slash, and sends the bare /-/tree to the default branch', async () => {
    const root = await get(`/${p.fullPath}/-/tree/main`);
    assert.equal(root.statusCode, 200);
    assert.match(root.body, new RegExp(`href="/${p.fullPath}/-/tree/main/src">src/</a>`));
    assert.match(root.body, new RegExp(`href="/${p.fullPath}/-/blob/main/README.md">README.md</a>`));
    const branch = await get(`/${p.fullPath}/-/tree/feature/deep`);
    assert.equal(branch.statusCode, 200);
    assert.match(branch.body, /feature\.txt/);
    const bare = await get(`/${p.fullPath}/-/tree`);
    assert.equal(bare.statusCode, 302);
    assert.equal(bare.headers.location, `/${p.fullPath}/-/tree/main`);
    assert.equal((await get(`/${p.fullPath}/-/tree/main/nothing`)).statusCode, 404);
    assert.equal((await get(`/${p.fullPath}/-/tree/no-such-ref`)).statusCode, 404);
  });

  it('shows a file highlighted and escaped, a binary file as a download, and serves raw bytes as text', async () => {
    const blob = await get(`/${p.fullPath}/-/blob/main/src/app.ts`);
    assert.equal(blob.statusCode, 200);
    assert.match(blob.body, /class="hljs-keyword">const</);
    assert.doesNotMatch(blob.body, /<script>alert|<img src=x/);
    assert.match(blob.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(blob.body, new RegExp(`id="raw-link" href="|href="/${p.fullPath}/-/raw/main/src/app.ts" id="raw-link"`));
    const binary = await get(`/${p.fullPath}/-/blob/main/bin/data.bin`);
    assert.match(binary.body, /id="binary"/);
    const raw = await get(`/${p.fullPath}/-/raw/main/src/app.ts`);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(raw.headers['x-content-type-options'], 'nosniff');
    assert.match(String(raw.headers['content-security-policy']), /sandbox/);
    assert.match(raw.body, /<script>alert\(1\)/);
    const rawBinary = await get(`/${p.fullPath}/-/raw/main/bin/data.bin`);
    assert.equal(rawBinary.headers['content-type'], 'application/octet-stream');
  });

  it('lists commits with escaped messages and shows a commit with one section per changed file', async () => {
    const list = await get(`/${p.fullPath}/-/commits/main`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /&lt;img src=x onerror=alert\(3\)&gt; title/);
    assert.match(list.body, /Start/);
    const path = await get(`/${p.fullPath}/-/commits/main/src`);
    assert.doesNotMatch(path.body, /Start/);

    const commit = await get(`/${p.fullPath}/-/commit/${sha}`);
    assert.equal(commit.statusCode, 200);
    assert.doesNotMatch(commit.body, /<script>alert|<img src=x/);
    assert.match(commit.body, /&lt;script&gt;alert\(4\)&lt;\/script&gt; body/);
    assert.match(commit.body, /3 changed files/);
    assert.equal((commit.body.match(/<section class="diff-file"/g) ?? []).length, 3);
    assert.match(commit.body, /<tr class="add"><td class="line">\+second<\/td><\/tr>/);
    assert.match(commit.body, /<tr class="del"><td class="line">-first<\/td><\/tr>/);
    assert.equal((await get(`/${p.fullPath}/-/commit/${'0'.repeat(40)}`)).statusCode, 404);
  });

  it('lists branches (default first) and tags', async () => {
    const branches = await get(`/${p.fullPath}/-/branches`);
    assert.equal(branches.statusCode, 200);
    const order = [...branches.body.matchAll(/class="item-title" href="[^"]*\/-\/tree\/([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(order, ['main', 'feature/deep']);
    const tags = await get(`/${p.fullPath}/-/tags`);
    assert.match(tags.body, /v1\.0/);
  });

  it('answers 404 for the repository pages of a project whose code the viewer may not read', async () => {
    const hidden = await createCiProject(t, { name: 'hidden-repo', visibility: 'private' });
    await pushFiles(t, hidden, { 'a.txt': 'a\n' });
    for (const page of ['tree/main', 'blob/main/a.txt', 'raw/main/a.txt', 'commits/main', 'branches', 'tags']) {
      const res = await get(`/${hidden.fullPath}/-/${page}`);
      assert.equal(res.statusCode, 404, page);
      assert.doesNotMatch(res.body.replace(/return_to=[^"]*/, ''), /a\.txt/);
    }
  });
});

/**
 * The overview keeps what it reads from git by object id and reads the branch head from the ref
 * files on every request (repository-cache.ts, ref-files.ts): what a push changes shows on the
 * next page, whether the branch is a loose ref or a packed one, and what the page kept for one
 * viewer never reaches another who may not read the project.
 */
describe('web interface: the project page after a push', () => {
  let t: TestApp;
  let p: CiProject;
  let owner: Browser;
  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const page = async (b?: Browser) => {
    const res = await get(`/${p.fullPath}`, b);
    assert.equal(res.statusCode, 200);
    return res.body;
  };

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'pushed-project', visibility: 'public' });
    owner = await signedInBrowser(t, p.owner);
  });
  after(async () => { await t.close(); });

  it('shows the new README, last commit and languages on the page after each push', async () => {
    const first = await pushFiles(t, p, { 'README.md': '# Version one\n', 'src/main.ts': 'export const a = 1;\n' }, { message: 'First version' });
    for (let i = 0; i < 2; i++) {
      const body = await page();
      assert.match(body, /Version one/);
      assert.ok(body.includes(`/-/commit/${first}`));
      assert.match(body, /TypeScript/);
      assert.doesNotMatch(body, /Python/);
    }
    const second = await pushFiles(t, p, { 'README.md': '# Version two\n', 'tool.py': 'print("a longer python file than the rest")\n' }, { message: 'Second version' });
    const body = await page();
    assert.match(body, /Version two/);
    assert.doesNotMatch(body, /Version one/);
    assert.ok(body.includes(`/-/commit/${second}`));
    assert.match(body, /Second version/);
    assert.match(body, /Python/);
  });

  it('reads a packed branch head, and a push over it, as a loose one', async () => {
    const packedAt = await pushFiles(t, p, { 'README.md': '# Version three\n' }, { message: 'Third version' });
    execFileSync('git', ['--git-dir', p.gitDir, 'pack-refs', '--all'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
    assert.ok(!fs.existsSync(path.join(p.gitDir, 'refs/heads/main')), 'main is in packed-refs only');
    let body = await page();
    assert.ok(body.includes(`/-/commit/${packedAt}`));
    assert.match(body, /Version three/);

    // The push writes a loose ref again; the packed line still names the third version.
    const loose = await pushFiles(t, p, { 'README.md': '# Version four\n' }, { message: 'Fourth version' });
    body = await page();
    assert.ok(body.includes(`/-/commit/${loose}`));
    assert.match(body, /Version four/);
    assert.doesNotMatch(body, /Version three/);
  });

  it('shows a commit made through the API on the next page', async () => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/commits`, token: p.ownerToken,
      payload: { branch: 'main', commit_message: 'Edited in the API', actions: [{ action: 'update', file_path: 'README.md', content: '# Version five\n' }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = await page(owner);
    assert.match(body, /Version five/);
    assert.ok(body.includes(`/-/commit/${(res.json() as { id: string }).id}`));
  });

  it('shows a pushed file and directory on the file and tree pages, also under a name seen before', async () => {
    await pushFiles(t, p, { 'lib/one.rb': 'puts "first words"\n' }, { message: 'Ruby file' });
    const file = () => get(`/${p.fullPath}/-/blob/main/lib/one.rb`);
    const tree = () => get(`/${p.fullPath}/-/tree/main/lib`);
    assert.match((await file()).body, /first words/);
    assert.match((await file()).body, /first words/);
    assert.doesNotMatch((await tree()).body, /two\.rb/);
    await pushFiles(t, p, { 'lib/one.rb': 'puts "second words"\n', 'lib/two.rb': 'puts 2\n' }, { message: 'Ruby files' });
    const after = (await file()).body;
    assert.match(after, /second words/);
    assert.doesNotMatch(after, /first words/);
    assert.match((await tree()).body, /two\.rb/);
    // The first version stays readable at its commit, as before.
    const first = execFileSync('git', ['--git-dir', p.gitDir, 'rev-parse', 'main~1'], { encoding: 'utf8' }).trim();
    assert.match((await get(`/${p.fullPath}/-/blob/${first}/lib/one.rb`)).body, /first words/);
  });

  it('answers the 404 page to strangers for a private project whose page its owner just loaded', async () => {
    const hidden = await createCiProject(t, { name: 'hidden-project', visibility: 'private' });
    await pushFiles(t, hidden, { 'README.md': '# Secret words\n' });
    const hiddenOwner = await signedInBrowser(t, hidden.owner);
    const own = await get(`/${hidden.fullPath}`, hiddenOwner);
    assert.equal(own.statusCode, 200);
    assert.match(own.body, /Secret words/);
    const stranger = await signedInBrowser(t, await createUser(t.db));
    for (const b of [undefined, stranger, owner]) {
      const res = await get(`/${hidden.fullPath}`, b);
      assert.equal(res.statusCode, 404);
      assert.doesNotMatch(res.body, /Secret words/);
    }
  });
});
