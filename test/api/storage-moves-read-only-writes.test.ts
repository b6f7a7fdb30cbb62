/**
 * Writes through the API while a repository is read-only for a storage move (spec: "a repository
 * is read-only while it moves"): a snippet's file cannot change (the Service's 400), a project's
 * default branch cannot change and neither can be deleted (409 with the git layer's words), nor
 * can a user whose repositories would go with them; other attributes still change. A snippet
 * commit under way when a move is scheduled finishes before the move starts, so the copy holds
 * it. Also: `repository_storage` on snippets for administrators only.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs/promises';
import os from 'node:os';
import type { UserRow } from '../../src/db/types.ts';
import { runGit } from '../../src/domain/repositories/git-command.ts';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { exists, fillRepository, git, makeShards, waitFor, type Shards } from '../helpers/storage-shards.ts';

const READ_ONLY = { message: 'The repository is temporarily read-only. Please try again later.' };
const SNIPPET_REFUSED = { message: { error: 'Repository Error updating the snippet' } };

let t: ListeningTestApp;
let shards: Shards;
let alice: UserRow;
let aliceToken: string;

before(async () => {
  shards = await makeShards(['default', 'b']);
  t = await startListeningApp({ KILN_STORAGES: shards.env, KILN_JOB_POLL_MS: '50', KILN_STORAGE_MOVE_TEST_DELAY_MS: '1500' });
  alice = await createUser(t.db);
  aliceToken = await createToken(t.db, alice);
});
after(async () => {
  await t.close();
  await shards.remove();
});

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

async function newSnippet(fileName: string, token = aliceToken) {
  const r = await api('POST', '/snippets', { title: fileName, file_name: fileName, content: 'first\n' }, token);
  assert.equal(r.statusCode, 201, r.body);
  return t.db.selectFrom('snippets').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
}

async function newProject(name: string, token = ROOT_TOKEN) {
  const r = await api('POST', '/projects', { name, path: name }, token);
  assert.equal(r.statusCode, 201, r.body);
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', r.json().id).executeTakeFirstOrThrow();
  await fillRepository(path.join(shards.dirs[row.repository_storage], row.disk_path), name);
  return row;
}

async function scheduleMove(kind: 'project' | 'snippet', id: number) {
  const r = await api('POST', `/${kind}s/${id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(r.statusCode, 201, r.body);
  return r.json() as { id: number };
}

async function finished(kind: 'project' | 'snippet', id: number) {
  const move = await waitFor(`${kind} move ${id}`, async () => {
    const m = (await api('GET', `/${kind}_repository_storage_moves/${id}`)).json();
    return ['finished', 'failed', 'cleanup_failed'].includes(m.state) ? m : undefined;
  });
  assert.equal(move.state, 'finished', move.error_message);
}

const fileAt = async (repo: string, file: string) => (await runGit(['show', `main:${file}`], { gitDir: repo })).stdout;

test("a moving snippet's file is not changed and the snippet is not deleted; the rest still changes", async () => {
  const snippet = await newSnippet('moving.txt');
  const move = await scheduleMove('snippet', snippet.id);

  for (const payload of [{ content: 'changed\n' }, { file_name: 'renamed.txt' }, { title: 'and a title', content: 'changed\n' }]) {
    const r = await api('PUT', `/snippets/${snippet.id}`, payload, aliceToken);
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), SNIPPET_REFUSED);
  }
  // The whole request is refused: not even the title of the last one changed.
  const kept = await t.db.selectFrom('snippets').selectAll().where('id', '=', snippet.id).executeTakeFirstOrThrow();
  assert.deepEqual([kept.title, kept.file_name, kept.content], ['moving.txt', 'moving.txt', 'first\n']);

  // Attributes that live in the database only are not lost by a move.
  const titled = await api('PUT', `/snippets/${snippet.id}`, { title: 'renamed while moving', visibility: 'internal' }, aliceToken);
  assert.equal(titled.statusCode, 200, titled.body);
  assert.equal(titled.json().title, 'renamed while moving');

  const del = await api('DELETE', `/snippets/${snippet.id}`, undefined, aliceToken);
  assert.equal(del.statusCode, 409);
  assert.deepEqual(del.json(), READ_ONLY);
  assert.ok(await t.db.selectFrom('snippets').select('id').where('id', '=', snippet.id).executeTakeFirst());

  await finished('snippet', move.id);
  const moved = path.join(shards.dirs.b, snippet.disk_path);
  assert.equal(await fileAt(moved, 'moving.txt'), 'first\n');
  const changed = await api('PUT', `/snippets/${snippet.id}`, { content: 'after the move\n' }, aliceToken);
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(await fileAt(moved, 'moving.txt'), 'after the move\n');
  assert.equal((await api('DELETE', `/snippets/${snippet.id}`, undefined, aliceToken)).statusCode, 204);
  assert.equal(await exists(moved), false);
});

test("a moving project's default branch is not changed and the project is not deleted", async () => {
  const project = await newProject('moving-project');
  const source = path.join(shards.dirs.default, project.disk_path);
  const move = await scheduleMove('project', project.id);

  const branch = await api('PUT', `/projects/${project.id}`, { default_branch: 'feature-moving-project', description: 'not this either' });
  assert.equal(branch.statusCode, 409);
  assert.deepEqual(branch.json(), READ_ONLY);
  assert.equal(git(source, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main');
  const kept = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual([kept.default_branch, kept.description], [project.default_branch, project.description]);

  const described = await api('PUT', `/projects/${project.id}`, { description: 'described while moving' });
  assert.equal(described.statusCode, 200, described.body);
  assert.equal(described.json().description, 'described while moving');

  const del = await api('DELETE', `/projects/${project.id}`);
  assert.equal(del.statusCode, 409);
  assert.deepEqual(del.json(), READ_ONLY);
  assert.equal((await api('GET', `/projects/${project.id}`)).statusCode, 200);

  await finished('project', move.id);
  const moved = path.join(shards.dirs.b, project.disk_path);
  const changed = await api('PUT', `/projects/${project.id}`, { default_branch: 'feature-moving-project' });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(changed.json().default_branch, 'feature-moving-project');
  assert.equal(git(moved, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/feature-moving-project');
  assert.equal((await api('DELETE', `/projects/${project.id}`)).statusCode, 202);
  assert.equal(await exists(moved), false);
});

test('a user whose project, snippet or solely owned group wiki is read-only is not deleted', async () => {
  const bob = await createUser(t.db);
  const bobToken = await createToken(t.db, bob);
  const project = await newProject('bobs-project', bobToken);
  const snippet = await newSnippet('bobs.txt', bobToken);
  const group = await api('POST', '/groups', { name: 'bobs-group', path: 'bobs-group' }, bobToken);
  assert.equal(group.statusCode, 201, group.body);
  const wiki = await t.db.selectFrom('namespaces').selectAll().where('id', '=', group.json().id).executeTakeFirstOrThrow();
  const repositories = [
    path.join(shards.dirs[project.repository_storage], project.disk_path),
    path.join(shards.dirs[snippet.repository_storage], snippet.disk_path),
    path.join(shards.dirs[wiki.repository_storage!], wiki.wiki_disk_path!),
  ];

  // Marked read-only as a scheduled move marks them, one container at a time.
  // (hard_delete: a soft delete of a group's sole owner is refused before anything else.)
  const cases = [['projects', project.id], ['snippets', snippet.id], ['namespaces', wiki.id]] as const;
  for (const [table, id] of cases) {
    await t.db.updateTable(table).set({ read_only: 1 }).where('id', '=', id).execute();
    const r = await api('DELETE', `/users/${bob.id}?hard_delete=true`);
    assert.equal(r.statusCode, 409, table);
    assert.deepEqual(r.json(), { message: 'User cannot be removed while a repository of theirs is temporarily read-only. Please try again later.' });
    await t.db.updateTable(table).set({ read_only: 0 }).where('id', '=', id).execute();
  }
  // Nothing went: the account, its containers and their repositories are all there.
  assert.ok(await t.db.selectFrom('users').select('id').where('id', '=', bob.id).executeTakeFirst());
  assert.ok(await t.db.selectFrom('projects').select('id').where('id', '=', project.id).executeTakeFirst());
  assert.ok(await t.db.selectFrom('snippets').select('id').where('id', '=', snippet.id).executeTakeFirst());
  for (const repo of repositories) assert.equal(await exists(repo), true, repo);

  assert.equal((await api('DELETE', `/users/${bob.id}?hard_delete=true`)).statusCode, 204);
  assert.equal((await api('GET', `/users/${bob.id}`)).statusCode, 404);
  for (const repo of repositories) assert.equal(await exists(repo), false, repo);
});

test('a snippet commit under way when a move is scheduled lands before the move copies the repository', async () => {
  const snippet = await newSnippet('racing.txt');
  const repo = path.join(shards.dirs.default, snippet.disk_path);
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-race-'));
  const marker = path.join(tmp, 'committing');
  // Holds the commit's ref update for a second, once it has begun: the window in which a move
  // could otherwise be scheduled and copy the repository without the commit.
  const hook = path.join(repo, 'hooks', 'reference-transaction');
  await fs.mkdir(path.dirname(hook), { recursive: true });
  await fs.writeFile(hook, `#!/bin/sh\ncat >/dev/null\nif [ "$1" = prepared ]; then touch '${marker}'; sleep 1; fi\nexit 0\n`, { mode: 0o755 });

  const order: string[] = [];
  const update = api('PUT', `/snippets/${snippet.id}`, { content: 'committed during scheduling\n' }, aliceToken)
    .then((r) => { order.push('update'); return r; });
  await waitFor('the commit to begin', async () => ((await exists(marker)) ? true : undefined));
  const schedule = api('POST', `/snippets/${snippet.id}/repository_storage_moves`, { destination_storage_name: 'b' })
    .then((r) => { order.push('schedule'); return r; });
  const [updated, scheduled] = await Promise.all([update, schedule]);
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(scheduled.statusCode, 201, scheduled.body);
  assert.deepEqual(order, ['update', 'schedule']);

  await finished('snippet', scheduled.json().id);
  const moved = path.join(shards.dirs.b, snippet.disk_path);
  await fs.rm(path.join(moved, 'hooks', 'reference-transaction'));
  assert.equal(await fileAt(moved, 'racing.txt'), 'committed during scheduling\n');
  assert.equal((await api('GET', `/snippets/${snippet.id}/raw`, undefined, aliceToken)).body, 'committed during scheduling\n');
  await fs.rm(tmp, { recursive: true, force: true });
});

test('repository_storage on snippets for administrators only; the storage move shows the BasicSnippet', async () => {
  const snippet = await newSnippet('shown.txt');
  const asAdmin = await api('GET', `/snippets/${snippet.id}`);
  assert.equal(asAdmin.json().repository_storage, 'default');
  const asAuthor = await api('GET', `/snippets/${snippet.id}`, undefined, aliceToken);
  assert.equal(asAuthor.statusCode, 200);
  assert.equal('repository_storage' in asAuthor.json(), false);
  assert.deepEqual(Object.keys(asAdmin.json()).sort(), [...Object.keys(asAuthor.json()), 'repository_storage'].sort());

  for (const token of [aliceToken, ROOT_TOKEN]) {
    const admin = token === ROOT_TOKEN;
    const created = await api('POST', '/snippets', { title: 'c', file_name: 'c.txt', content: 'c' }, token);
    assert.equal('repository_storage' in created.json(), admin);
    const updated = await api('PUT', `/snippets/${created.json().id}`, { title: 'd' }, token);
    assert.equal('repository_storage' in updated.json(), admin);
    const list = (await api('GET', '/snippets', undefined, token)).json() as Record<string, unknown>[];
    assert.ok(list.length > 0);
    for (const s of list) assert.equal(s.repository_storage, admin ? 'default' : undefined);
  }

  // The move's `snippet` is the Service's BasicSnippet: no file, no shard (the move names both).
  const move = await scheduleMove('snippet', snippet.id);
  const shown = (await api('GET', `/snippet_repository_storage_moves/${move.id}`)).json();
  assert.deepEqual(Object.keys(shown.snippet).sort(), ['author', 'created_at', 'description', 'http_url_to_repo', 'id', 'project_id', 'raw_url', 'ssh_url_to_repo', 'title', 'updated_at', 'visibility', 'web_url']);
  await finished('snippet', move.id);
  assert.equal((await api('GET', `/snippets/${snippet.id}`)).json().repository_storage, 'b');
});
