/**
 * Project and group import and export (issue 32, item 6): a project with history, branches, a
 * wiki, labels, a milestone, issues with notes and award emoji, a merge request with a note, CI
 * variables and a pipeline goes out as an archive and comes back (into another namespace of the
 * same kiln and into a second, fresh kiln) equal through the API, with the same refs and a
 * repository git fsck accepts. Every refusal: archives that are not archives, that escape their
 * directory, hold links, are too large or are decompression bombs, and callers without the role.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { git, refs, waitFor } from '../helpers/storage-shards.ts';
import type { UserRow } from '../../src/db/types.ts';

let t: TestApp;
let other: TestApp;
let alice: UserRow;
let aliceToken: string;
let bobToken: string;

before(async () => {
  t = await startTestApp({ KILN_JOB_POLL_MS: '50' });
  other = await startTestApp({ KILN_JOB_POLL_MS: '50' });
  alice = await createUser(t.db, { username: 'alice', email: 'alice@example.com' });
  aliceToken = await createToken(t.db, alice);
  bobToken = await createToken(t.db, await createUser(t.db, { username: 'bob', email: 'bob@example.com' }));
  // On the second kiln alice exists (mapped by username); bob does not (the importer stands in).
  await createUser(other.db, { username: 'alice', email: 'alice@elsewhere.example.com' });
  // The Service's rate limits (one download a minute) are tested on their own below.
  const unlimited = {
    project_export_limit: 0, project_download_export_limit: 0, project_import_limit: 0, group_export_limit: 0,
    group_download_export_limit: 0, group_import_limit: 0,
  };
  for (const app of [t, other]) await app.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: unlimited });
});
after(async () => {
  await t.close();
  await other.close();
});

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const api = (app: TestApp, method: Method, url: string, payload?: object, token = ROOT_TOKEN) =>
  app.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

async function ok(app: TestApp, method: Method, url: string, payload?: object, token = ROOT_TOKEN) {
  const r = await api(app, method, url, payload, token);
  assert.ok(r.statusCode < 300, `${method} ${url}: ${r.statusCode} ${r.body}`);
  return r.json();
}

function multipart(fields: Record<string, string>, file: Buffer | null) {
  const boundary = `kiln${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="export.tar.gz"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    parts.push(file, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

function importProject(app: TestApp, fields: Record<string, string>, file: Buffer | null, token = ROOT_TOKEN) {
  const body = multipart(fields, file);
  return app.request({ method: 'POST', url: '/api/v4/projects/import', token, ...body });
}

async function importDone(app: TestApp, id: number, token = ROOT_TOKEN) {
  return waitFor(`import ${id}`, async () => {
    const s = (await api(app, 'GET', `/projects/${id}/import`, undefined, token)).json();
    return s.import_status === 'finished' || s.import_status === 'failed' ? s : undefined;
  }, 30_000);
}

async function exportAndDownload(app: TestApp, id: number | string, token = ROOT_TOKEN): Promise<Buffer> {
  assert.deepEqual(await ok(app, 'POST', `/projects/${id}/export`, undefined, token), { message: '202 Accepted' });
  const status = await waitFor(`export ${id}`, async () => {
    const s = (await api(app, 'GET', `/projects/${id}/export`, undefined, token)).json();
    return s.export_status === 'finished' ? s : undefined;
  }, 30_000);
  assert.match(status._links.api_url, /\/api\/v4\/projects\/\d+\/export\/download$/);
  const r = await api(app, 'GET', `/projects/${id}/export/download`, undefined, token);
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/octet-stream');
  assert.match(String(r.headers['content-disposition']), /^attachment; filename=".*_export\.tar\.gz"/);
  return r.rawPayload;
}

function gitDirOf(app: TestApp, row: { repository_storage: string; disk_path: string }): string {
  const shard = app.config.storages.find((s) => s.name === row.repository_storage)!;
  return path.join(shard.path, row.disk_path);
}

async function projectRow(app: TestApp, id: number) {
  return app.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A tar.gz of the given entries, written by hand (names and types as given). */
async function craftArchive(entries: { name: string; type?: 'file' | 'symlink' | 'link'; body?: Buffer; linkname?: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    if (e.type === 'symlink' || e.type === 'link') pack.entry({ name: e.name, type: e.type, linkname: e.linkname ?? '/etc/passwd' });
    else pack.entry({ name: e.name }, e.body ?? Buffer.from('x'));
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return zlib.gzipSync(Buffer.concat(chunks));
}

let source: { id: number; path_with_namespace: string };

test('a project with history, branches, wiki, issues, a merge request, variables and a pipeline', async () => {
  source = await ok(t, 'POST', '/projects', { name: 'Source', path: 'source', initialize_with_readme: true, description: 'the source' });
  const id = source.id;
  await ok(t, 'POST', `/projects/${id}/members`, { user_id: alice.id, access_level: 30 });
  await ok(t, 'POST', `/projects/${id}/repository/files/.gitlab-ci.yml`, {
    branch: 'main', content: 'test:\n  script: echo hi\n', commit_message: 'Add CI',
  });
  await ok(t, 'POST', `/projects/${id}/repository/branches`, { branch: 'feature', ref: 'main' });
  await ok(t, 'POST', `/projects/${id}/repository/files/feature.txt`, { branch: 'feature', content: 'feature\n', commit_message: 'Feature' });
  await ok(t, 'POST', `/projects/${id}/repository/tags`, { tag_name: 'v1.0', ref: 'main' });
  await ok(t, 'POST', `/projects/${id}/wikis`, { title: 'Home', content: 'Welcome to the wiki' });
  await ok(t, 'POST', `/projects/${id}/wikis`, { title: 'Setup guide', content: '# Setup\n\nrun it', format: 'markdown' });
  await ok(t, 'POST', `/projects/${id}/labels`, { name: 'bug', color: '#ff0000', description: 'broken', priority: 1 });
  await ok(t, 'POST', `/projects/${id}/labels`, { name: 'feature', color: '#00ff00' });
  const milestone = await ok(t, 'POST', `/projects/${id}/milestones`, { title: 'v1', description: 'first', due_date: '2027-01-31' });
  const i1 = await ok(t, 'POST', `/projects/${id}/issues`, { title: 'First', description: 'one', labels: 'bug', milestone_id: milestone.id });
  await ok(t, 'POST', `/projects/${id}/issues`, { title: 'Second', assignee_ids: [alice.id] }, aliceToken);
  await ok(t, 'POST', `/projects/${id}/issues`, { title: 'Third', labels: 'feature' });
  await ok(t, 'PUT', `/projects/${id}/issues/3`, { state_event: 'close' });
  await ok(t, 'POST', `/projects/${id}/issues/${i1.iid}/notes`, { body: 'a comment' }, aliceToken);
  await ok(t, 'POST', `/projects/${id}/issues/${i1.iid}/notes`, { body: 'bob here' }, bobToken).catch(() => undefined);
  await ok(t, 'POST', `/projects/${id}/issues/${i1.iid}/award_emoji`, { name: 'thumbsup' }, aliceToken);
  const mr = await ok(t, 'POST', `/projects/${id}/merge_requests`, {
    source_branch: 'feature', target_branch: 'main', title: 'Add the feature', labels: 'feature', milestone_id: milestone.id,
  });
  await ok(t, 'POST', `/projects/${id}/merge_requests/${mr.iid}/notes`, { body: 'looks good' }, aliceToken);
  await ok(t, 'POST', `/projects/${id}/variables`, { key: 'SECRET', value: 'do-not-export-me', protected: true });
  await ok(t, 'POST', `/projects/${id}/variables`, { key: 'PLAIN', value: 'also-not', environment_scope: 'production' });
  await ok(t, 'POST', `/projects/${id}/pipeline`, { ref: 'main' });
});

/** What must be equal between the source and an import: each listed resource without ids and URLs. */
async function snapshot(app: TestApp, id: number) {
  const list = async (url: string) => (await api(app, 'GET', `/projects/${id}${url}`)).json();
  const user = (u: { username: string } | null) => u?.username ?? null;
  const issues = (await list('/issues?per_page=100&sort=asc')).map((i: Record<string, any>) => ({
    iid: i.iid, title: i.title, description: i.description, state: i.state, labels: i.labels, milestone: i.milestone?.title ?? null,
    created_at: i.created_at, closed_at: i.closed_at, upvotes: i.upvotes, user_notes_count: i.user_notes_count,
    assignees: i.assignees.map(user),
  }));
  const issueNotes = [];
  for (const i of issues) {
    issueNotes.push((await list(`/issues/${i.iid}/notes?sort=asc&per_page=100`)).map((n: Record<string, any>) => ({
      body: n.body, system: n.system, created_at: n.created_at,
    })));
  }
  const mrs = (await list('/merge_requests?per_page=100&sort=asc')).map((m: Record<string, any>) => ({
    iid: m.iid, title: m.title, state: m.state, source_branch: m.source_branch, target_branch: m.target_branch, labels: m.labels,
    milestone: m.milestone?.title ?? null, sha: m.sha, created_at: m.created_at, user_notes_count: m.user_notes_count,
  }));
  const mrNotes = [];
  for (const m of mrs) mrNotes.push((await list(`/merge_requests/${m.iid}/notes?sort=asc`)).map((n: Record<string, any>) => n.body));
  const mrChanges = [];
  for (const m of mrs) mrChanges.push((await list(`/merge_requests/${m.iid}/changes`)).changes.map((c: Record<string, any>) => c.new_path));
  return {
    labels: (await list('/labels?per_page=100')).map((l: Record<string, any>) => ({
      name: l.name, color: l.color, description: l.description, priority: l.priority,
    })),
    milestones: (await list('/milestones')).map((m: Record<string, any>) => ({
      iid: m.iid, title: m.title, description: m.description, state: m.state, due_date: m.due_date,
    })),
    issues, issueNotes, mrs, mrNotes, mrChanges,
    variables: (await list('/variables')).map((v: Record<string, any>) => ({
      key: v.key, protected: v.protected, masked: v.masked, environment_scope: v.environment_scope, variable_type: v.variable_type,
    })),
    pipelines: (await list('/pipelines')).map((p: Record<string, any>) => ({ iid: p.iid, ref: p.ref, sha: p.sha, status: p.status, source: p.source })),
    branches: (await list('/repository/branches')).map((b: Record<string, any>) => ({ name: b.name, sha: b.commit.id })),
    tags: (await list('/repository/tags')).map((b: Record<string, any>) => ({ name: b.name, sha: b.commit.id })),
    wiki: (await list('/wikis?with_content=1')).map((w: Record<string, any>) => ({ slug: w.slug, title: w.title, content: w.content, format: w.format })),
  };
}

test('export → download → import into another namespace and into a second kiln gives the same project', async () => {
  const sourceRow = await projectRow(t, source.id);
  // The merge request's merge ref is made by a job; the archive should hold it.
  await waitFor('merge ref', async () => (refs(gitDirOf(t, sourceRow)).includes('refs/merge-requests/1/merge') ? true : undefined), 30_000);
  const archive = await exportAndDownload(t, source.id);
  const expected = await snapshot(t, source.id);
  assert.equal(expected.issues.length, 3);
  assert.equal(expected.wiki.length, 2);
  assert.ok(expected.pipelines.length >= 1);

  // Into a group of the same kiln.
  const group = await ok(t, 'POST', '/groups', { name: 'Dest', path: 'dest' });
  const r = await importProject(t, { path: 'copy', name: 'The Copy', namespace: 'dest', overwrite: 'False' }, archive);
  assert.equal(r.statusCode, 201, r.body);
  const created = r.json();
  assert.equal(created.path_with_namespace, 'dest/copy');
  assert.equal(created.name, 'The Copy');
  assert.ok(['scheduled', 'started', 'finished'].includes(created.import_status));
  assert.notEqual(created.id, source.id);
  const done = await importDone(t, created.id);
  assert.equal(done.import_status, 'finished', done.import_error);
  assert.deepEqual(await snapshot(t, created.id), expected);
  const copyRow = await projectRow(t, created.id);
  assert.equal(copyRow.namespace_id, group.id);
  assert.equal(refs(gitDirOf(t, copyRow)), refs(gitDirOf(t, sourceRow)));
  git(gitDirOf(t, copyRow), 'fsck', '--no-progress');
  // Variables come without their values; people map to the users of the same name.
  const variable = await ok(t, 'GET', `/projects/${created.id}/variables/SECRET`);
  assert.equal(variable.value, '');
  const members = (await ok(t, 'GET', `/projects/${created.id}/members`)).map((m: { username: string; access_level: number }) => [m.username, m.access_level]);
  assert.deepEqual(members.filter(([u]: [string]) => u === 'alice'), [['alice', 30]]);
  const issue = await ok(t, 'GET', `/projects/${created.id}/issues/2`);
  assert.equal(issue.author.username, 'alice');

  // Into a second, fresh kiln: alice is mapped by username; the rest falls to the importer (root).
  const r2 = await importProject(other, { path: 'copy' }, archive);
  assert.equal(r2.statusCode, 201, r2.body);
  const done2 = await importDone(other, r2.json().id);
  assert.equal(done2.import_status, 'finished', done2.import_error);
  assert.equal(done2.path_with_namespace, 'root/copy');
  assert.deepEqual(await snapshot(other, r2.json().id), expected);
  const otherRow = await projectRow(other, r2.json().id);
  assert.equal(refs(gitDirOf(other, otherRow)), refs(gitDirOf(t, sourceRow)));
  git(gitDirOf(other, otherRow), 'fsck', '--no-progress');
  const second = await api(other, 'GET', `/projects/${r2.json().id}/issues/2`);
  assert.equal(second.json().author.username, 'alice');

  // The archive holds no variable's value.
  assert.ok(!zlib.gunzipSync(archive).includes(Buffer.from('do-not-export-me')));

  // A new issue after the import continues the imported numbering.
  const next = await ok(other, 'POST', `/projects/${r2.json().id}/issues`, { title: 'after' });
  assert.equal(next.iid, 4);

  // overwrite: the same path again replaces the project.
  const taken = await importProject(other, { path: 'copy' }, archive);
  assert.equal(taken.statusCode, 400);
  assert.match(taken.json().message, /has already been taken/);
  const over = await importProject(other, { path: 'copy', overwrite: 'true' }, archive);
  assert.equal(over.statusCode, 201, over.body);
  assert.equal((await importDone(other, over.json().id)).import_status, 'finished');
});

test('export status before any export, and the download of an export that does not exist', async () => {
  const p = await ok(t, 'POST', '/projects', { name: 'Fresh', path: 'fresh' });
  const s = await ok(t, 'GET', `/projects/${p.id}/export`);
  assert.equal(s.export_status, 'none');
  assert.equal(s._links, undefined);
  const r = await api(t, 'GET', `/projects/${p.id}/export/download`);
  assert.equal(r.statusCode, 404);
  assert.deepEqual(r.json(), { message: '404 Not found or has expired' });
  // An empty project exports and imports too (no bundle in its archive).
  const archive = await exportAndDownload(t, p.id);
  const imported = await importProject(t, { path: 'fresh-copy' }, archive);
  assert.equal(imported.statusCode, 201, imported.body);
  const done = await importDone(t, imported.json().id);
  assert.equal(done.import_status, 'finished', done.import_error);
});

async function refused(archive: Buffer, pathName: string, message: RegExp) {
  const r = await importProject(t, { path: pathName }, archive);
  assert.equal(r.statusCode, 201, r.body);
  const done = await importDone(t, r.json().id);
  assert.equal(done.import_status, 'failed');
  assert.match(done.import_error, message);
  // Nothing half-written: no record, an empty repository.
  const issues = await t.db.selectFrom('issues').select('id').where('project_id', '=', r.json().id).execute();
  assert.equal(issues.length, 0);
  const row = await projectRow(t, r.json().id);
  assert.equal(git(gitDirOf(t, row), 'for-each-ref').trim(), '');
}

test('archives that are refused fail the import and leave nothing behind', async () => {
  const good = await exportAndDownload(t, source.id);
  const goodTar = zlib.gunzipSync(good);
  // Not a gzip at all; a gzip cut short.
  await refused(Buffer.from('this is not an archive'), 'bad-1', /could not be read/);
  await refused(good.subarray(0, Math.floor(good.length / 2)), 'bad-2', /could not be read|not a project export/);
  // Path escapes and absolute paths.
  await refused(await craftArchive([{ name: 'VERSION', body: Buffer.from('1\n') }, { name: '../../evil', body: Buffer.from('x') }]), 'bad-3', /escapes the archive/);
  await refused(await craftArchive([{ name: '/etc/evil', body: Buffer.from('x') }]), 'bad-4', /absolute path/);
  // Links.
  await refused(await craftArchive([{ name: 'project.json', type: 'symlink', linkname: '/etc/passwd' }]), 'bad-5', /is a link/);
  await refused(await craftArchive([{ name: 'project.json', type: 'link', linkname: 'VERSION' }]), 'bad-6', /is a link/);
  // Unknown entries, wrong version, invalid records.
  await refused(await craftArchive([{ name: 'VERSION', body: Buffer.from('1\n') }, { name: 'extra.sh' }]), 'bad-7', /unknown entry/);
  await refused(await craftArchive([{ name: 'VERSION', body: Buffer.from('99\n') }, { name: 'project.json', body: Buffer.from('{}') }]), 'bad-8', /not supported/);
  const doc = JSON.parse(String(await entryOf(goodTar, 'project.json')));
  doc.issues[0].title = 'x'.repeat(300);
  await refused(await craftArchive([
    { name: 'VERSION', body: Buffer.from('1\n') }, { name: 'project.json', body: Buffer.from(JSON.stringify(doc)) },
  ]), 'bad-9', /issues have an invalid title/);
  // A decompression bomb: 64 MiB of zeros in a few kilobytes.
  const bombTar = tar.pack();
  bombTar.entry({ name: 'project.json', size: 64 * 1024 * 1024 }, Buffer.alloc(64 * 1024 * 1024));
  bombTar.finalize();
  const chunks: Buffer[] = [];
  for await (const c of bombTar) chunks.push(c as Buffer);
  const bomb = zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
  assert.ok(bomb.length < 200_000);
  await refused(bomb, 'bad-10', /decompression bomb/);
});

async function entryOf(tarBuffer: Buffer, name: string): Promise<Buffer> {
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      if (entry.header.name === name) return Buffer.concat(chunks);
    }
    throw new Error(`no ${name}`);
  })();
  extract.end(tarBuffer);
  return done;
}

/** A project at root/<path> with a commit, an issue, a member and a star: the one an overwrite aims at. */
async function projectToOverwrite(pathName: string) {
  const p = await ok(t, 'POST', '/projects', {
    name: `Keep ${pathName}`, path: pathName, visibility: 'public', initialize_with_readme: true,
  });
  await ok(t, 'POST', `/projects/${p.id}/issues`, { title: 'kept issue' });
  await ok(t, 'POST', `/projects/${p.id}/members`, { user_id: alice.id, access_level: 40 });
  await ok(t, 'POST', `/projects/${p.id}/star`, undefined, bobToken);
  const row = await projectRow(t, p.id);
  return { id: p.id as number, row, refs: refs(gitDirOf(t, row)) };
}

/** The temporary project of an overwrite that failed is removed: its import status is gone. */
async function overwriteGone(id: number) {
  await waitFor(`import ${id} removed`, async () => {
    const r = await api(t, 'GET', `/projects/${id}/import`);
    return r.statusCode === 404 ? true : undefined;
  }, 30_000);
}

test('an overwrite import that fails mid-way leaves the project it was to replace as it was', async () => {
  const old = await projectToOverwrite('keep-failed');
  const goodTar = zlib.gunzipSync(await exportAndDownload(t, source.id));
  const entries = ['VERSION', 'project.json', 'repository.bundle'];
  const bodies = new Map<string, Buffer>();
  for (const name of entries) bodies.set(name, await entryOf(goodTar, name));
  // A repository bundle damaged half-way: found when the repository is restored.
  const bundle = bodies.get('repository.bundle')!;
  const damagedBundle = await craftArchive(entries.map((name) => ({
    name, body: name === 'repository.bundle' ? bundle.subarray(0, Math.floor(bundle.length * 0.6)) : bodies.get(name)!,
  })));
  // A record that cannot be restored: found after the repository was, in the records' transaction.
  const doc = JSON.parse(String(bodies.get('project.json')));
  doc.issues[1].title = 'x'.repeat(300);
  const damagedRecord = await craftArchive(entries.map((name) => ({
    name, body: name === 'project.json' ? Buffer.from(JSON.stringify(doc)) : bodies.get(name)!,
  })));
  for (const archive of [damagedBundle, damagedRecord]) {
    const r = await importProject(t, { path: 'keep-failed', overwrite: 'true' }, archive);
    assert.equal(r.statusCode, 201, r.body);
    // The import is made beside the project (GitlabProjectsImportService: `<path>-<hex>`).
    assert.match(r.json().path_with_namespace, /^root\/keep-failed-[0-9a-f]{32}$/);
    assert.notEqual(r.json().id, old.id);
    // Meanwhile the old project answers as before.
    assert.equal((await ok(t, 'GET', '/projects/root%2Fkeep-failed')).id, old.id);
    await overwriteGone(r.json().id);
    const shown = await ok(t, 'GET', '/projects/root%2Fkeep-failed');
    assert.equal(shown.id, old.id);
    assert.equal(shown.name, 'Keep keep-failed');
    assert.equal(shown.star_count, 1);
    assert.deepEqual((await ok(t, 'GET', `/projects/${old.id}/issues`)).map((i: { title: string }) => i.title), ['kept issue']);
    const members = (await ok(t, 'GET', `/projects/${old.id}/members`)).map((m: { username: string }) => m.username).sort();
    assert.deepEqual(members, ['alice', 'root']);
    const row = await projectRow(t, old.id);
    const place = (r: typeof row) => [
      r.name, r.path, r.namespace_id, r.repository_storage, r.disk_path, r.pending_delete, r.default_branch,
    ];
    assert.deepEqual(place(row), place(old.row));
    assert.equal(refs(gitDirOf(t, row)), old.refs);
    git(gitDirOf(t, row), 'fsck', '--no-progress');
    // Nothing of the temporary project is left: no row, no repository.
    const temp = await t.db.selectFrom('projects').select('id').where('id', '=', r.json().id).executeTakeFirst();
    assert.equal(temp, undefined);
  }
});

test('an overwrite import that succeeds takes the project\'s place, members, stars and forks', async () => {
  const old = await projectToOverwrite('keep-replaced');
  const oldDir = gitDirOf(t, old.row);
  // A fork of the old project (it borrows the old repository's objects) and an old path that redirects.
  const fork = await ok(t, 'POST', `/projects/${old.id}/fork`, { namespace: 'alice', path: 'keep-fork', name: 'keep-fork' });
  await waitFor('the fork', async () => ((await projectRow(t, fork.id)).import_status === 'finished' ? true : undefined), 30_000);
  await ok(t, 'PUT', `/projects/${old.id}`, { path: 'keep-replaced-2' });
  await ok(t, 'PUT', `/projects/${old.id}`, { path: 'keep-replaced' });
  const archive = await exportAndDownload(t, source.id);
  const r = await importProject(t, { path: 'keep-replaced', overwrite: 'true' }, archive);
  assert.equal(r.statusCode, 201, r.body);
  assert.match(r.json().path_with_namespace, /^root\/keep-replaced-[0-9a-f]{32}$/);
  const newId = r.json().id;
  const done = await importDone(t, newId);
  assert.equal(done.import_status, 'finished', done.import_error);
  // The import lives at the path now, with the old project's name, under its own (new) id.
  assert.equal(done.path_with_namespace, 'root/keep-replaced');
  const shown = await ok(t, 'GET', '/projects/root%2Fkeep-replaced');
  assert.equal(shown.id, newId);
  assert.equal(shown.name, 'Keep keep-replaced');
  assert.match(shown.web_url, /\/root\/keep-replaced$/);
  assert.equal((await api(t, 'GET', `/projects/${old.id}`)).statusCode, 404);
  assert.deepEqual(await snapshot(t, newId), await snapshot(t, source.id));
  // What the old project had moves over: its member alice (the archive's alice is a Developer and
  // wins), bob's star, the fork, and the old path that redirected to it.
  const members = (await ok(t, 'GET', `/projects/${newId}/members`)) as { username: string; access_level: number }[];
  assert.deepEqual(members.filter((m) => m.username === 'alice').map((m) => m.access_level), [30]);
  assert.ok(members.some((m) => m.username === 'root'));
  assert.equal(shown.star_count, 1);
  const forkShown = await ok(t, 'GET', `/projects/${fork.id}`);
  assert.equal(forkShown.forked_from_project.id, newId);
  assert.deepEqual((await ok(t, 'GET', `/projects/${newId}/forks`)).map((p: { id: number }) => p.id), [fork.id]);
  assert.equal((await ok(t, 'GET', '/projects/root%2Fkeep-replaced-2')).id, newId);
  // The old repository goes once the fork has objects of its own; the fork stays complete.
  await waitFor('the old repository to go', async () => (await fsp.stat(oldDir).then(() => false, () => true)) || undefined, 30_000);
  const forkRow = await projectRow(t, fork.id);
  assert.equal(forkRow.objects_from_project_id, null);
  git(gitDirOf(t, forkRow), 'fsck', '--no-progress');
  assert.equal(refs(gitDirOf(t, await projectRow(t, newId))), refs(gitDirOf(t, await projectRow(t, source.id))));
});

test('overwrite without a project at the path is a plain import; only who may administer the namespace overwrites', async () => {
  const archive = await exportAndDownload(t, source.id);
  const plain = await importProject(t, { path: 'keep-none', overwrite: 'true' }, archive);
  assert.equal(plain.statusCode, 201, plain.body);
  assert.equal(plain.json().path_with_namespace, 'root/keep-none');
  assert.equal((await importDone(t, plain.json().id)).import_status, 'finished');
  // alice may create projects in the group as a Maintainer, but only its Owners may overwrite one there.
  const group = await ok(t, 'POST', '/groups', { name: 'Overwrites', path: 'overwrites' });
  await ok(t, 'POST', `/groups/${group.id}/members`, { user_id: alice.id, access_level: 40 });
  const target = await ok(t, 'POST', '/projects', { name: 'Target', path: 'target', namespace_id: group.id, initialize_with_readme: true });
  const r = await importProject(t, { path: 'target', namespace: 'overwrites', overwrite: 'true' }, archive, aliceToken);
  assert.equal(r.statusCode, 201, r.body);
  await overwriteGone(r.json().id);
  const kept = await ok(t, 'GET', '/projects/overwrites%2Ftarget');
  assert.equal(kept.id, target.id);
});

test('an archive over max_import_size is refused before it is stored', async () => {
  await ok(t, 'PUT', '/application/settings', { max_import_size: 1 });
  try {
    const r = await importProject(t, { path: 'too-big' }, Buffer.alloc(2 * 1024 * 1024, 1));
    assert.equal(r.statusCode, 413);
    const row = await t.db.selectFrom('projects').select('id').where('path', '=', 'too-big').executeTakeFirst();
    assert.equal(row, undefined);
  } finally {
    await ok(t, 'PUT', '/application/settings', { max_import_size: 0 });
  }
});

test('the request is checked: missing file or path, unknown namespace, a namespace the caller may not create in', async () => {
  const noFile = await importProject(t, { path: 'x' }, null);
  assert.equal(noFile.statusCode, 400);
  assert.equal(noFile.json().message, '400 Bad request - "file" not given');
  const noPath = await importProject(t, {}, Buffer.from('x'));
  assert.equal(noPath.statusCode, 400);
  assert.equal(noPath.json().message, '400 Bad request - "path" not given');
  const unknown = await importProject(t, { path: 'x', namespace: 'no-such-namespace' }, Buffer.from('x'));
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().message, '404 Namespace Not Found');
  // bob is not a member of the group `dest`.
  const notAllowed = await importProject(t, { path: 'x', namespace: 'dest' }, Buffer.from('x'), bobToken);
  assert.equal(notAllowed.statusCode, 400);
  assert.equal(notAllowed.json().message, 'Namespace is not valid');
  const badOverwrite = await importProject(t, { path: 'x', overwrite: 'maybe' }, Buffer.from('x'));
  assert.equal(badOverwrite.statusCode, 400);
});

test('export needs a Maintainer; the status and download are not for others', async () => {
  // alice is a Developer of the source.
  assert.equal((await api(t, 'POST', `/projects/${source.id}/export`, undefined, aliceToken)).statusCode, 403);
  assert.equal((await api(t, 'GET', `/projects/${source.id}/export`, undefined, aliceToken)).statusCode, 403);
  assert.equal((await api(t, 'GET', `/projects/${source.id}/export/download`, undefined, aliceToken)).statusCode, 403);
  // bob cannot see the (private) project at all.
  assert.equal((await api(t, 'POST', `/projects/${source.id}/export`, undefined, bobToken)).statusCode, 404);
  assert.equal((await api(t, 'GET', `/projects/${source.id}/export/download`, undefined, bobToken)).statusCode, 404);
  assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${source.id}/export` })).statusCode, 401);
});

test('an upload URL must be one the address guard allows', async () => {
  const local = await api(t, 'POST', `/projects/${source.id}/export`, { upload: { url: 'http://127.0.0.1:9/x', http_method: 'PUT' } });
  assert.equal(local.statusCode, 400);
  assert.match(JSON.stringify(local.json()), /Requests to localhost are not allowed/);
  const method = await api(t, 'POST', `/projects/${source.id}/export`, { upload: { url: 'https://example.com/x', http_method: 'DELETE' } });
  assert.equal(method.statusCode, 400);
});

test('remote-import takes https URLs to allowed addresses only', async () => {
  const ftp = await api(t, 'POST', '/projects/remote-import', { url: 'ftp://whatever.com/url', path: 'remote' });
  assert.equal(ftp.statusCode, 400);
  assert.deepEqual(ftp.json(), { message: 'File url is blocked: Only allowed schemes are https' });
  const local = await api(t, 'POST', '/projects/remote-import', { url: 'https://127.0.0.1/archive.tar.gz', path: 'remote' });
  assert.equal(local.statusCode, 400);
  assert.deepEqual(local.json(), { message: 'File url is blocked: Requests to localhost are not allowed' });
  // Off by its feature flag: the route is not there.
  await ok(t, 'POST', '/features/import_project_from_remote_file', { value: 'false' });
  try {
    const off = await api(t, 'POST', '/projects/remote-import', { url: 'https://example.com/a.tar.gz', path: 'remote' });
    assert.equal(off.statusCode, 404);
  } finally {
    await api(t, 'DELETE', '/features/import_project_from_remote_file');
  }
});

test('remote-import-s3 is behind its flag, off by default; an object it cannot read is the Service\'s 400', async () => {
  const params = {
    path: 'from-s3', region: 'aws-region', bucket_name: 'aws-bucket-name', file_key: 'aws-file-key', access_key_id: 'id',
    secret_access_key: 'secret',
  };
  assert.equal((await api(t, 'POST', '/projects/remote-import-s3', params)).statusCode, 404);
  await ok(t, 'POST', '/features/import_project_from_remote_file_s3', { value: 'true' });
  try {
    const bad = await api(t, 'POST', '/projects/remote-import-s3', { ...params, bucket_name: 'Not/A/Bucket' });
    assert.equal(bad.statusCode, 400);
    const r = await api(t, 'POST', '/projects/remote-import-s3', params);
    assert.equal(r.statusCode, 400);
    assert.match(r.json().message, /^Failed to open 'aws-file-key' in 'aws-bucket-name'/);
  } finally {
    await api(t, 'DELETE', '/features/import_project_from_remote_file_s3');
  }
});

test('groups: export and download by Owners, import at the top level or under a parent the caller may create in', async () => {
  const g = await ok(t, 'POST', '/groups', { name: 'Team', path: 'team', description: 'the team' });
  await ok(t, 'POST', `/groups/${g.id}/labels`, { name: 'group-label', color: '#123456' });
  await ok(t, 'POST', `/groups/${g.id}/milestones`, { title: 'Q1' });
  await ok(t, 'POST', `/groups/${g.id}/members`, { user_id: alice.id, access_level: 40 });
  await ok(t, 'POST', '/groups', { name: 'Sub', path: 'sub', parent_id: g.id });
  // alice is a Maintainer, not an Owner.
  assert.equal((await api(t, 'POST', `/groups/${g.id}/export`, undefined, aliceToken)).statusCode, 403);
  assert.equal((await api(t, 'POST', `/groups/${g.id}/export`, undefined, bobToken)).statusCode, 404);
  assert.deepEqual(await ok(t, 'POST', `/groups/${g.id}/export`), { message: '202 Accepted' });
  const archive = await waitFor('group export', async () => {
    const r = await api(t, 'GET', `/groups/${g.id}/export/download`);
    return r.statusCode === 200 ? r.rawPayload : undefined;
  }, 30_000);
  const body = multipart({ name: 'Imported Team', path: 'imported-team' }, archive);
  const r = await t.request({ method: 'POST', url: '/api/v4/groups/import', token: ROOT_TOKEN, ...body });
  assert.equal(r.statusCode, 202, r.body);
  assert.deepEqual(r.json(), { message: '202 Accepted' });
  const imported = await ok(t, 'GET', '/groups/imported-team');
  assert.equal(imported.name, 'Imported Team');
  await waitFor('group import', async () => {
    const subs = (await api(t, 'GET', '/groups/imported-team/subgroups')).json();
    return subs.length === 1 ? subs : undefined;
  }, 30_000);
  assert.deepEqual((await ok(t, 'GET', '/groups/imported-team/labels')).map((l: { name: string }) => l.name), ['group-label']);
  assert.deepEqual((await ok(t, 'GET', '/groups/imported-team/milestones')).map((m: { title: string }) => m.title), ['Q1']);
  const members = (await ok(t, 'GET', '/groups/imported-team/members')).map((m: { username: string }) => m.username).sort();
  assert.deepEqual(members, ['alice', 'root']);
  // Under a parent bob may not create subgroups in: 403; at the top level an ordinary user may (can_create_group).
  const underTeam = multipart({ name: 'X', path: 'x', parent_id: String(g.id) }, archive);
  assert.equal((await t.request({ method: 'POST', url: '/api/v4/groups/import', token: bobToken, ...underTeam })).statusCode, 404);
  const missing = multipart({ name: 'X' }, archive);
  assert.equal((await t.request({ method: 'POST', url: '/api/v4/groups/import', token: ROOT_TOKEN, ...missing })).statusCode, 400);
});

test('the Service rate limits export, download and import', async () => {
  const carol = await createUser(t.db, { username: 'carol' });
  const carolToken = await createToken(t.db, carol);
  const p = await ok(t, 'POST', '/projects', { name: 'Limited', path: 'limited' }, carolToken);
  await ok(t, 'PUT', '/application/settings', { project_export_limit: 1 });
  try {
    assert.equal((await api(t, 'POST', `/projects/${p.id}/export`, undefined, carolToken)).statusCode, 202);
    const second = await api(t, 'POST', `/projects/${p.id}/export`, undefined, carolToken);
    assert.equal(second.statusCode, 429);
    assert.deepEqual(second.json(), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
  } finally {
    await ok(t, 'PUT', '/application/settings', { project_export_limit: 0 });
  }
});

test('statistics=true on a group\'s and a user\'s project lists', async () => {
  const g = await ok(t, 'GET', '/groups/dest');
  const inGroup = await ok(t, 'GET', `/groups/${g.id}/projects?statistics=true`);
  assert.ok(inGroup.length > 0);
  for (const p of inGroup) assert.equal(typeof p.statistics.repository_size, 'number');
  const plain = await ok(t, 'GET', `/groups/${g.id}/projects`);
  assert.equal(plain[0].statistics, undefined);
  // bob reads nothing of the private group; alice (no membership of dest) gets no statistics.
  const mine = await ok(t, 'GET', '/users/root/projects?statistics=true');
  assert.ok(mine.every((p: { statistics?: { commit_count: number } }) => typeof p.statistics?.commit_count === 'number'));
  const others = await ok(t, 'GET', '/users/root/projects?statistics=true', undefined, bobToken);
  assert.ok(others.every((p: { statistics?: unknown }) => p.statistics === undefined));
});
