/**
 * Project wikis (issue 32, item 4; lib/api/wikis.rb of the Service 15.2, python-gitlab's
 * test_wikis and test_project_wiki): pages in each format, slugs made from titles with spaces and
 * directories, with_content, version, render_html, updates that rename and change format,
 * deletion, attachments, who may do what, and the same pages over git: a clone of
 * `<project>.wiki.git` holds them and a push there shows through the API. The wiki lives inside
 * the project's repository directory, so it goes with the project.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startListeningApp, git, tempDir, cloneUrl } from '../helpers/git.ts';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { exists, makeShards, waitFor, type Shards } from '../helpers/storage-shards.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

function multipart(fields: [string, string][], file: { field: string; filename: string; content: Buffer | string }) {
  const boundary = `----kiln${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = fields.map(([k, v]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\n`
    + 'Content-Type: application/octet-stream\r\n\r\n'));
  parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('project wikis API', () => {
  let t: TestApp & { baseUrl: string };
  let people: People;
  let project: number;
  let fullPath = '';
  const base = () => `/api/v4/projects/${project}/wikis`;
  const create = (payload: Record<string, unknown>, token = people.tokens.developer) =>
    t.request({ method: 'POST', url: base(), token, payload });

  before(async () => {
    t = await startListeningApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    fullPath = (await t.request({ method: 'GET', url: `/api/v4/projects/${project}`, token: people.tokens.owner })).json().path_with_namespace;
  });
  after(async () => { await t.close(); });

  it('lists no pages before any was written', async () => {
    const res = await t.request({ method: 'GET', url: base(), token: people.tokens.guest });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), []);
  });

  it('creates a page in each format, with the slug and title the Service makes', async () => {
    const cases = [
      { title: 'Home Page', format: undefined, slug: 'Home-Page', fmt: 'markdown', file: 'Home-Page.md' },
      { title: 'docs/Read Me', format: 'rdoc', slug: 'docs/Read-Me', fmt: 'rdoc', file: 'docs/Read-Me.rdoc' },
      { title: 'guide', format: 'asciidoc', slug: 'guide', fmt: 'asciidoc', file: 'guide.asciidoc' },
      { title: 'a/b/notes', format: 'org', slug: 'a/b/notes', fmt: 'org', file: 'a/b/notes.org' },
    ];
    for (const c of cases) {
      const res = await create({ title: c.title, content: `content of ${c.title}`, ...(c.format ? { format: c.format } : {}) });
      assert.equal(res.statusCode, 201, res.body);
      const page = res.json();
      assert.deepEqual(Object.keys(page), ['format', 'slug', 'title', 'content', 'encoding']);
      assert.equal(page.slug, c.slug);
      assert.equal(page.format, c.fmt);
      assert.equal(page.title, path.basename(c.slug).replace(/-/g, ' '));
      assert.equal(page.content, `content of ${c.title}`);
      assert.equal(page.encoding, 'UTF-8');
    }
    const list = await t.request({ method: 'GET', url: base(), token: people.tokens.guest });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().map((p: { slug: string }) => p.slug).sort(), cases.map((c) => c.slug).sort());
    assert.deepEqual(Object.keys(list.json()[0]), ['format', 'slug', 'title']);
    const full = await t.request({ method: 'GET', url: `${base()}?with_content=true`, token: people.tokens.guest });
    assert.ok(full.json().every((p: { content: string; title: string }) => p.content.startsWith('content of ')));
  });

  it('reads a page by slug (URL-encoded directories, spaces as in the title, any case)', async () => {
    for (const slug of ['docs%2FRead-Me', 'docs%2FRead%20Me', 'DOCS%2Fread-me']) {
      const res = await t.request({ method: 'GET', url: `${base()}/${slug}`, token: people.tokens.guest });
      assert.equal(res.statusCode, 200, `${slug}: ${res.body}`);
      assert.equal(res.json().slug, 'docs/Read-Me');
    }
    const missing = await t.request({ method: 'GET', url: `${base()}/nope`, token: people.tokens.guest });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Wiki Page Not Found' });
  });

  it('refuses a duplicate, a blank title and blank content with validation errors', async () => {
    const dup = await create({ title: 'home page', content: 'x' });
    assert.equal(dup.statusCode, 400);
    assert.deepEqual(dup.json(), { message: { base: ['Duplicate page: A page with that title at that path already exists'] } });
    const blank = await create({ title: '  ', content: ' ' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: { title: ["can't be blank"], content: ["can't be blank"] } });
    const long = await create({ title: 'x'.repeat(246), content: 'x' });
    assert.deepEqual(long.json(), { message: { title: ['exceeds the limit of 245 bytes'] } });
    const badFormat = await create({ title: 'y', content: 'x', format: 'textile' });
    assert.equal(badFormat.statusCode, 400);
  });

  it('updates content, keeps the directory of a plain new title, changes the format (python-gitlab test_wikis)', async () => {
    const made = await create({ title: 'title/subtitle', content: 'test content' });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.json().slug, 'title/subtitle');
    const upd = await t.request({
      method: 'PUT', url: `${base()}/title%2Fsubtitle`, token: people.tokens.developer, payload: { content: 'update content', title: 'subtitle' },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    assert.equal(upd.json().slug, 'title/subtitle');
    assert.equal(upd.json().content, 'update content');
    const moved = await t.request({
      method: 'PUT', url: `${base()}/title%2Fsubtitle`, token: people.tokens.developer, payload: { title: 'Moved Page', format: 'org' },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([moved.json().slug, moved.json().format, moved.json().content], ['title/Moved-Page', 'org', 'update content']);
    const old = await t.request({ method: 'GET', url: `${base()}/title%2Fsubtitle`, token: people.tokens.guest });
    assert.equal(old.statusCode, 404);
    const clash = await t.request({
      method: 'PUT', url: `${base()}/title%2FMoved-Page`, token: people.tokens.developer, payload: { title: '/Home Page' },
    });
    assert.equal(clash.statusCode, 400);
    assert.deepEqual(clash.json(), { message: { base: ['There is already a page with the same title in that path.'] } });
  });

  it('reads earlier versions by commit and renders HTML', async () => {
    const v1 = await create({ title: 'versioned', content: '# First\n\nsome *text*' });
    assert.equal(v1.statusCode, 201, v1.body);
    const { gitDir } = await wikiGitDir();
    const first = (await git(['--git-dir', gitDir, 'rev-parse', 'HEAD'], '/')).stdout.trim();
    const upd = await t.request({ method: 'PUT', url: `${base()}/versioned`, token: people.tokens.developer, payload: { content: 'second' } });
    assert.equal(upd.statusCode, 200, upd.body);
    const old = await t.request({ method: 'GET', url: `${base()}/versioned?version=${first}`, token: people.tokens.guest });
    assert.equal(old.statusCode, 200, old.body);
    assert.equal(old.json().content, '# First\n\nsome *text*');
    const current = await t.request({ method: 'GET', url: `${base()}/versioned`, token: people.tokens.guest });
    assert.equal(current.json().content, 'second');
    const unknown = await t.request({ method: 'GET', url: `${base()}/versioned?version=${'f'.repeat(40)}`, token: people.tokens.guest });
    assert.equal(unknown.statusCode, 404);
    const html = await t.request({ method: 'GET', url: `${base()}/versioned?version=${first}&render_html=true`, token: people.tokens.guest });
    assert.match(html.json().content, /<h1[^>]*>.*First<\/h1>/s);
    assert.match(html.json().content, /<em>text<\/em>/);
    const log = await git(['--git-dir', gitDir, 'log', '--format=%an %s', '-2'], '/');
    assert.equal(log.stdout, `${people.users.developer.name} ${people.users.developer.username} updated page: versioned\n`
      + `${people.users.developer.name} ${people.users.developer.username} created page: versioned\n`);
  });

  it('lets guests read, developers write and maintainers delete; hides a private wiki from others', async () => {
    const guest = await create({ title: 'by guest', content: 'x' }, people.tokens.guest);
    assert.equal(guest.statusCode, 403);
    const del = await t.request({ method: 'DELETE', url: `${base()}/versioned`, token: people.tokens.developer });
    assert.equal(del.statusCode, 403);
    const outsider = await t.request({ method: 'GET', url: base(), token: people.tokens.nonMember });
    assert.equal(outsider.statusCode, 404);
    const anonymous = await t.request({ method: 'GET', url: base() });
    assert.equal(anonymous.statusCode, 404);
    const ok = await t.request({ method: 'DELETE', url: `${base()}/versioned`, token: people.tokens.maintainer });
    assert.equal(ok.statusCode, 204, ok.body);
    const gone = await t.request({ method: 'GET', url: `${base()}/versioned`, token: people.tokens.guest });
    assert.equal(gone.statusCode, 404);
  });

  it('withholds the wiki when its feature is disabled', async () => {
    const other = await createProject(t, people);
    const off = await t.request({ method: 'PUT', url: `/api/v4/projects/${other}`, token: people.tokens.owner, payload: { wiki_access_level: 'disabled' } });
    assert.equal(off.statusCode, 200, off.body);
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${other}/wikis`, token: people.tokens.owner });
    assert.equal(res.statusCode, 403);
  });

  it('commits attachments to the wiki repository', async () => {
    const res = await t.request({
      method: 'POST', url: `${base()}/attachments`, token: people.tokens.developer,
      ...multipart([], { field: 'file', filename: 'my diagram (1).png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }),
    });
    assert.equal(res.statusCode, 201, res.body);
    const a = res.json();
    assert.equal(a.file_name, 'mydiagram1.png');
    assert.match(a.file_path, /^uploads\/[0-9a-f]{32}\/mydiagram1\.png$/);
    assert.equal(a.branch, 'main');
    assert.deepEqual(a.link, { url: a.file_path, markdown: `![mydiagram1](${a.file_path})` });
    const { gitDir } = await wikiGitDir();
    const blob = await git(['--git-dir', gitDir, 'cat-file', '-s', `main:${a.file_path}`], '/');
    assert.equal(blob.stdout.trim(), '4');
    const msg = await git(['--git-dir', gitDir, 'log', '-1', '--format=%s'], '/');
    assert.equal(msg.stdout.trim(), 'Upload attachment mydiagram1.png');
    const guest = await t.request({
      method: 'POST', url: `${base()}/attachments`, token: people.tokens.guest, ...multipart([], { field: 'file', filename: 'a.txt', content: 'a' }),
    });
    assert.equal(guest.statusCode, 403);
    const other = await t.request({
      method: 'POST', url: `${base()}/attachments`, token: people.tokens.developer,
      ...multipart([['branch', 'side']], { field: 'file', filename: 'notes.txt', content: 'hello' }),
    });
    assert.equal(other.statusCode, 201, other.body);
    assert.equal(other.json().branch, 'side');
    assert.equal(other.json().link.markdown, `[notes.txt](${other.json().file_path})`);
    const none = await t.request({ method: 'POST', url: `${base()}/attachments`, token: people.tokens.developer, payload: {} });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { message: '400 Bad request - "file" not given' });
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { max_attachment_size: 1 } });
    assert.equal(set.statusCode, 200, set.body);
    const big = await t.request({
      method: 'POST', url: `${base()}/attachments`, token: people.tokens.developer,
      ...multipart([], { field: 'file', filename: 'big.bin', content: Buffer.alloc(1024 * 1024 + 1) }),
    });
    assert.equal(big.statusCode, 413);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { max_attachment_size: 10 } });
    // The attachment is no page.
    const list = await t.request({ method: 'GET', url: base(), token: people.tokens.guest });
    assert.ok(!list.json().some((p: { slug: string }) => p.slug.startsWith('uploads/')));
  });

  async function wikiGitDir() {
    const row = await t.db.selectFrom('projects').select(['repository_storage', 'disk_path']).where('id', '=', project).executeTakeFirstOrThrow();
    const shard = t.config.storages.find((s) => s.name === row.repository_storage)!;
    return { gitDir: path.join(shard.path, row.disk_path, 'kiln-wiki.git'), projectDir: path.join(shard.path, row.disk_path) };
  }

  it('clones the wiki over HTTP with its pages, and a push there shows through the API', async () => {
    const dir = await tempDir();
    try {
      const denied = await git(['clone', cloneUrl(t.baseUrl, `${fullPath}.wiki`, { username: 'x', password: people.tokens.nonMember }), 'no'], dir);
      assert.notEqual(denied.code, 0);
      const url = cloneUrl(t.baseUrl, `${fullPath}.wiki`, { username: people.users.developer.username, password: people.tokens.developer });
      const clone = await git(['clone', url, 'wiki'], dir);
      assert.equal(clone.code, 0, clone.stderr);
      const work = path.join(dir, 'wiki');
      assert.equal(await fs.readFile(path.join(work, 'Home-Page.md'), 'utf8'), 'content of Home Page');
      assert.equal(await fs.readFile(path.join(work, 'docs', 'Read-Me.rdoc'), 'utf8'), 'content of docs/Read Me');
      await fs.mkdir(path.join(work, 'pushed'), { recursive: true });
      await fs.writeFile(path.join(work, 'pushed', 'From-Git.markdown'), 'written with git');
      assert.equal((await git(['add', '.'], work)).code, 0);
      assert.equal((await git(['commit', '-m', 'from git'], work)).code, 0);
      const guestUrl = cloneUrl(t.baseUrl, `${fullPath}.wiki`, { username: people.users.guest.username, password: people.tokens.guest });
      const refused = await git(['push', guestUrl, 'HEAD:main'], work);
      assert.notEqual(refused.code, 0);
      const push = await git(['push', 'origin', 'HEAD:main'], work);
      assert.equal(push.code, 0, push.stderr);
      const page = await t.request({ method: 'GET', url: `${base()}/pushed%2FFrom-Git`, token: people.tokens.guest });
      assert.equal(page.statusCode, 200, page.body);
      assert.deepEqual([page.json().format, page.json().title, page.json().content], ['markdown', 'From Git', 'written with git']);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('clones the wiki of a project that never had a page', async () => {
    const fresh = await createProject(t, people, 'public');
    const p = (await t.request({ method: 'GET', url: `/api/v4/projects/${fresh}`, token: people.tokens.owner })).json().path_with_namespace;
    const dir = await tempDir();
    try {
      const clone = await git(['clone', cloneUrl(t.baseUrl, `${p}.wiki`), 'w'], dir);
      assert.equal(clone.code, 0, clone.stderr);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('finds wiki files in a project search (wiki_blobs) and snapshots the wiki repository', async () => {
    const found = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/search?scope=wiki_blobs&search=written`, token: people.tokens.guest });
    assert.equal(found.statusCode, 200, found.body);
    assert.deepEqual(found.json().map((b: { path: string; ref: string }) => [b.path, b.ref]), [['pushed/From-Git.markdown', 'main']]);
    const outsider = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/search?scope=wiki_blobs&search=written`, token: people.tokens.nonMember });
    assert.equal(outsider.statusCode, 404);
    const snapshot = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/snapshot?wiki=true`, token: ROOT_TOKEN });
    assert.equal(snapshot.statusCode, 200);
    assert.equal(snapshot.headers['content-type'], 'application/x-tar');
    assert.ok(snapshot.rawPayload.includes(Buffer.from('refs/')));
  });

  it('removes the wiki with its project', async () => {
    const { projectDir, gitDir } = await wikiGitDir();
    assert.ok((await fs.stat(path.join(gitDir, 'HEAD'))).isFile());
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${project}`, token: people.tokens.owner });
    assert.equal(del.statusCode, 202, del.body);
    await assert.rejects(fs.stat(projectDir));
  });
});

describe('a project wiki in a storage move', () => {
  let t: TestApp & { baseUrl: string };
  let shards: Shards;

  before(async () => {
    shards = await makeShards(['default', 'b']);
    t = await startListeningApp({ KILN_STORAGES: shards.env, KILN_JOB_POLL_MS: '50' });
  });
  after(async () => {
    await t.close();
    await shards.remove();
  });

  it('moves with its project and keeps its pages', async () => {
    const made = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'moving', initialize_with_readme: true } });
    assert.equal(made.statusCode, 201, made.body);
    const id = made.json().id as number;
    const page = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/wikis`, token: ROOT_TOKEN, payload: { title: 'Kept', content: 'still here' } });
    assert.equal(page.statusCode, 201, page.body);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const destination = row.repository_storage === 'default' ? 'b' : 'default';
    const move = await t.request({
      method: 'POST', url: `/api/v4/projects/${id}/repository_storage_moves`, token: ROOT_TOKEN, payload: { destination_storage_name: destination },
    });
    assert.equal(move.statusCode, 201, move.body);
    const done = await waitFor('the move', async () => {
      const m = (await t.request({ method: 'GET', url: `/api/v4/project_repository_storage_moves/${move.json().id}`, token: ROOT_TOKEN })).json();
      return ['finished', 'failed', 'cleanup_failed'].includes(m.state) ? m : undefined;
    });
    assert.equal(done.state, 'finished', JSON.stringify(done));
    assert.ok(await exists(path.join(shards.dirs[destination], row.disk_path, 'kiln-wiki.git', 'HEAD')));
    assert.ok(!(await exists(path.join(shards.dirs[row.repository_storage], row.disk_path))));
    const read = await t.request({ method: 'GET', url: `/api/v4/projects/${id}/wikis/Kept`, token: ROOT_TOKEN });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().content, 'still here');
    const write = await t.request({ method: 'PUT', url: `/api/v4/projects/${id}/wikis/Kept`, token: ROOT_TOKEN, payload: { content: 'moved' } });
    assert.equal(write.statusCode, 200, write.body);
  });
});
