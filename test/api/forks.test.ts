/**
 * Forks (issue 32, item 1): the fork job makes a repository that borrows its source's objects
 * (git alternates) and clones like any other; the relationship (forked_from_project, forks_count,
 * GET …/forks, POST/DELETE …/fork[/:forked_from_id]); deleting the source leaves every fork
 * clonable and complete.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs/promises';
import os from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { fillRepository, git, makeShards, refs, waitFor, type Shards } from '../helpers/storage-shards.ts';
import type { UserRow } from '../../src/db/types.ts';

let t: ListeningTestApp;
let shards: Shards;
let alice: UserRow;
let aliceToken: string;
let bobToken: string;
const run = promisify(execFile);
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

before(async () => {
  shards = await makeShards(['default', 'b']);
  t = await startListeningApp({ KILN_STORAGES: shards.env, KILN_JOB_POLL_MS: '50' });
  alice = await createUser(t.db, { username: 'alice' });
  aliceToken = await createToken(t.db, alice);
  bobToken = await createToken(t.db, await createUser(t.db, { username: 'bob' }));
});
after(async () => {
  await t.close();
  await shards.remove();
});

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

function gitDirOf(row: { repository_storage: string; disk_path: string }): string {
  const shard = t.config.storages.find((s) => s.name === row.repository_storage)!;
  return path.join(shard.path, row.disk_path);
}

async function projectRow(id: number) {
  return t.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function newProject(name: string, extra: object = {}, token = ROOT_TOKEN) {
  const r = await api('POST', '/projects', { name, path: name, ...extra }, token);
  assert.equal(r.statusCode, 201, r.body);
  const row = await projectRow(r.json().id);
  await fillRepository(gitDirOf(row), name);
  return row;
}

async function finished(id: number) {
  return waitFor(`fork ${id}`, async () => {
    const row = await projectRow(id);
    return row.import_status === 'finished' || row.import_status === 'failed' ? row : undefined;
  });
}

async function cloneHead(fullPath: string, token = ROOT_TOKEN, user = 'root'): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-fork-clone-'));
  try {
    const remote = `${t.url.replace('://', `://${user}:${token}@`)}/${fullPath}.git`;
    await run('git', ['clone', '--quiet', remote, path.join(work, 'c')], { env: gitEnv });
    return (await run('git', ['-C', path.join(work, 'c'), 'rev-parse', 'HEAD'], { env: gitEnv })).stdout.trim();
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

test('a fork borrows its source objects, clones, and is counted', async () => {
  const source = await newProject('upstream', { visibility: 'internal', description: 'the source' });
  const r = await api('POST', `/projects/${source.id}/fork`, { namespace: 'alice' });
  assert.equal(r.statusCode, 201, r.body);
  const fork = r.json();
  assert.equal(fork.namespace.path, 'alice');
  assert.equal(fork.path, 'upstream');
  assert.equal(fork.description, 'the source');
  assert.equal(fork.visibility, 'internal');
  assert.equal(fork.forked_from_project.id, source.id);
  assert.equal(fork.forked_from_project.path_with_namespace, 'root/upstream');
  assert.ok(['scheduled', 'started', 'finished'].includes(fork.import_status));

  const row = await finished(fork.id);
  assert.equal(row.import_status, 'finished', row.import_error ?? '');
  assert.equal(row.default_branch, 'main');
  const forkDir = gitDirOf(row);
  const alternates = await fs.readFile(path.join(forkDir, 'objects', 'info', 'alternates'), 'utf8');
  assert.equal(alternates.trim(), path.resolve(gitDirOf(source), 'objects'));
  // The source no longer prunes what its refs leave behind: a fork may still need it.
  assert.equal(git(gitDirOf(source), 'config', 'gc.pruneExpire').trim(), 'never');
  // No object was copied: the fork's own store is empty.
  assert.deepEqual((await fs.readdir(path.join(forkDir, 'objects', 'pack'))), []);
  assert.equal(refs(forkDir), refs(gitDirOf(source)));
  git(forkDir, 'fsck', '--no-dangling');
  assert.equal(await cloneHead('alice/upstream'), git(gitDirOf(source), 'rev-parse', 'main').trim());

  const shown = (await api('GET', `/projects/${source.id}`)).json();
  assert.equal(shown.forks_count, 1);
  const forkShown = (await api('GET', `/projects/${fork.id}`, undefined, aliceToken)).json();
  assert.equal(forkShown.import_status, 'finished');
  assert.equal(forkShown.forked_from_project.id, source.id);
  assert.equal(forkShown.forked_from_project.forks_count, 1);
  const list = await api('GET', `/projects/${source.id}/forks`);
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json().map((p: { id: number }) => p.id), [fork.id]);
  assert.deepEqual((await api('GET', `/projects/${source.id}/forks?visibility=public`)).json(), []);
  assert.deepEqual((await api('GET', `/projects/${source.id}/forks?search=nothing-like-it`)).json(), []);
});

test('fork parameters: name, path, namespace_path, visibility never above the source, and the refusals', async () => {
  const source = await newProject('params-src', { visibility: 'public' }, aliceToken);
  const r = await api('POST', `/projects/${source.id}/fork`, {
    namespace_path: 'alice', name: 'Renamed', path: 'renamed', visibility: 'private', mr_default_target_self: true,
  }, aliceToken);
  assert.equal(r.statusCode, 201, r.body);
  assert.equal(r.json().name, 'Renamed');
  assert.equal(r.json().path_with_namespace, 'alice/renamed');
  assert.equal(r.json().visibility, 'private');
  assert.equal((await projectRow(r.json().id)).mr_default_target_self, 1);
  await finished(r.json().id);

  // Into its own namespace again under the same name and path: the Service's conflict!(errors).
  const again = await api('POST', `/projects/${source.id}/fork`, {}, aliceToken);
  assert.equal(again.statusCode, 409);
  assert.deepEqual(again.json(), { message: { name: ['has already been taken'], path: ['has already been taken'] } });

  // Bob may fork a public project into his own namespace, but not into Alice's.
  const aliceNamespace = await t.db.selectFrom('namespaces').select('id').where('owner_id', '=', alice.id).executeTakeFirstOrThrow();
  const notHis = await api('POST', `/projects/${source.id}/fork`, { namespace_id: aliceNamespace.id, path: 'x', name: 'x' }, bobToken);
  assert.equal(notHis.statusCode, 404);
  assert.deepEqual(notHis.json(), { message: '404 Target Namespace Not Found' });
  const missing = await api('POST', `/projects/${source.id}/fork`, { namespace: 'no-such-namespace' }, bobToken);
  assert.equal(missing.statusCode, 404);
  const bobs = await api('POST', `/projects/${source.id}/fork`, {}, bobToken);
  assert.equal(bobs.statusCode, 201, bobs.body);
  assert.equal(bobs.json().visibility, 'public');
  await finished(bobs.json().id);

  // The personal project limit holds for forks too.
  const capped = await createToken(t.db, await createUser(t.db, { username: 'capped', projects_limit: 0 }));
  const limited = await api('POST', `/projects/${source.id}/fork`, {}, capped);
  assert.equal(limited.statusCode, 409);
  assert.deepEqual(limited.json(), {
    message: { limit_reached: ['Personal project creation is not allowed. Please contact your administrator with questions'] },
  });

  // A private project is not there for those who may not read it.
  const hidden = await newProject('hidden-src', { visibility: 'private' }, aliceToken);
  const r404 = await api('POST', `/projects/${hidden.id}/fork`, {}, bobToken);
  assert.equal(r404.statusCode, 404);
  assert.deepEqual(r404.json(), { message: '404 Project Not Found' });
  assert.equal((await api('POST', `/projects/${source.id}/fork`, {})).statusCode, 201);
  assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${source.id}/fork` })).statusCode, 401);
});

test('the relationship alone: link (Maintainers), 409 once a fork, unlink (Owners), 304 when not a fork', async () => {
  const a = await newProject('link-a', { visibility: 'public' }, aliceToken);
  const b = await newProject('link-b', {}, aliceToken);
  const bobForbidden = await api('POST', `/projects/${b.id}/fork/${a.id}`, undefined, bobToken);
  assert.equal(bobForbidden.statusCode, 404, 'a private project is hidden from non-members');
  const linked = await api('POST', `/projects/${b.id}/fork/${a.id}`, undefined, aliceToken);
  assert.equal(linked.statusCode, 201, linked.body);
  assert.equal(linked.json().forked_from_project.id, a.id);
  assert.equal((await api('GET', `/projects/${a.id}`)).json().forks_count, 1);
  const twice = await api('POST', `/projects/${b.id}/fork/${a.id}`, undefined, aliceToken);
  assert.equal(twice.statusCode, 409);
  assert.deepEqual(twice.json(), { message: 'Project already forked' });
  const noSource = await api('POST', `/projects/${b.id}/fork/999999`, undefined, aliceToken);
  assert.equal(noSource.statusCode, 404);
  assert.deepEqual(noSource.json(), { message: '404 Source Project Not Found' });

  // A Developer may not unlink.
  const bob = await t.db.selectFrom('users').select('id').where('username', '=', 'bob').executeTakeFirstOrThrow();
  assert.equal((await api('POST', `/projects/${b.id}/members`, { user_id: bob.id, access_level: 30 }, aliceToken)).statusCode, 201);
  assert.equal((await api('DELETE', `/projects/${b.id}/fork`, undefined, bobToken)).statusCode, 403);
  assert.equal((await api('POST', `/projects/${b.id}/fork/${a.id}`, undefined, bobToken)).statusCode, 403);
  const unlinked = await api('DELETE', `/projects/${b.id}/fork`, undefined, aliceToken);
  assert.equal(unlinked.statusCode, 204);
  assert.equal((await api('DELETE', `/projects/${b.id}/fork`, undefined, aliceToken)).statusCode, 304);
  const after = (await api('GET', `/projects/${b.id}`, undefined, aliceToken)).json();
  assert.equal(after.forked_from_project, undefined);
  assert.equal((await api('GET', `/projects/${a.id}`)).json().forks_count, 0);
});

test('deleting the source leaves its forks (and theirs) clonable and complete', async () => {
  const source = await newProject('doomed');
  const fork = (await api('POST', `/projects/${source.id}/fork`, { namespace: 'alice', path: 'doomed-fork', name: 'doomed-fork' })).json();
  await finished(fork.id);
  const forkOfFork = (await api('POST', `/projects/${fork.id}/fork`, { namespace: 'bob', path: 'doomed-fork-2', name: 'doomed-fork-2' })).json();
  const row2 = await finished(forkOfFork.id);
  assert.equal(row2.import_status, 'finished');
  const head = git(gitDirOf(source), 'rev-parse', 'main').trim();
  const sourceDir = gitDirOf(source);

  const del = await api('DELETE', `/projects/${source.id}`);
  assert.equal(del.statusCode, 202);
  await waitFor('the source repository to go', async () => (await fs.stat(sourceDir).then(() => false, () => true)) || undefined);
  const forkRow = await projectRow(fork.id);
  assert.equal(forkRow.objects_from_project_id, null);
  const forkDir = gitDirOf(forkRow);
  await assert.rejects(fs.stat(path.join(forkDir, 'objects', 'info', 'alternates')));
  git(forkDir, 'fsck', '--no-dangling');
  git(gitDirOf(row2), 'fsck', '--no-dangling');
  assert.equal(await cloneHead('alice/doomed-fork'), head);
  assert.equal(await cloneHead('bob/doomed-fork-2'), head);
  const shown = (await api('GET', `/projects/${fork.id}`)).json();
  assert.equal(shown.forked_from_project, undefined);
  assert.equal(shown.import_status, 'finished');
  // Still a fork without a source: linking it again is refused as the Service refuses it.
  const other = await newProject('other-source');
  assert.equal((await api('POST', `/projects/${fork.id}/fork/${other.id}`)).statusCode, 409);
});

test('moving the source to another storage points its forks at the new place', async () => {
  const source = await newProject('travelling');
  const fork = (await api('POST', `/projects/${source.id}/fork`, { namespace: 'alice', path: 'travelling-fork', name: 'travelling-fork' })).json();
  const forkRow = await finished(fork.id);
  const oldDir = gitDirOf(source);
  const move = await api('POST', `/projects/${source.id}/repository_storage_moves`, { destination_storage_name: 'b' });
  assert.equal(move.statusCode, 201, move.body);
  await waitFor('the move', async () => {
    const m = (await api('GET', `/project_repository_storage_moves/${move.json().id}`)).json();
    return ['finished', 'failed', 'cleanup_failed'].includes(m.state) ? m : undefined;
  });
  const moved = await projectRow(source.id);
  assert.equal(moved.repository_storage, 'b');
  await assert.rejects(fs.stat(oldDir));
  const alternates = await fs.readFile(path.join(gitDirOf(forkRow), 'objects', 'info', 'alternates'), 'utf8');
  assert.equal(alternates.trim(), path.join(await fs.realpath(shards.dirs.b), moved.disk_path, 'objects'));
  git(gitDirOf(forkRow), 'fsck', '--no-dangling');
  assert.equal(await cloneHead('alice/travelling-fork'), git(gitDirOf(moved), 'rev-parse', 'main').trim());
});
