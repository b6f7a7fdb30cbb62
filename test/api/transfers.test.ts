/**
 * Transfers (issue 32, item 2): a project to a group and back (its old paths redirect for the API
 * and git, inherited access follows the new namespace, the visibility is capped by the group),
 * the refusals in the Service's words, and a group moved below another and back to the top level
 * (its projects' old paths redirect).
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
import { fillRepository, git } from '../helpers/storage-shards.ts';
import type { UserRow } from '../../src/db/types.ts';

let t: ListeningTestApp;
let owner: UserRow;
let ownerToken: string;
let reader: UserRow;
let readerToken: string;
const run = promisify(execFile);
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

before(async () => {
  t = await startListeningApp({ KILN_JOB_POLL_MS: '50' });
  owner = await createUser(t.db, { username: 'olivia' });
  ownerToken = await createToken(t.db, owner);
  reader = await createUser(t.db, { username: 'rita' });
  readerToken = await createToken(t.db, reader);
});
after(async () => {
  await t.close();
});

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

async function newGroup(pathName: string, extra: object = {}, token = ownerToken) {
  const r = await api('POST', '/groups', { name: pathName, path: pathName, ...extra }, token);
  assert.equal(r.statusCode, 201, r.body);
  return r.json();
}

async function cloneHead(fullPath: string, token: string, user: string): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-transfer-clone-'));
  try {
    const remote = `${t.url.replace('://', `://${user}:${token}@`)}/${fullPath}.git`;
    await run('git', ['clone', '--quiet', remote, path.join(work, 'c')], { env: gitEnv });
    return (await run('git', ['-C', path.join(work, 'c'), 'rev-parse', 'HEAD'], { env: gitEnv })).stdout.trim();
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

test('a project to a group and back: namespace, redirects for the API and git, inherited access', async () => {
  const group = await newGroup('team', { visibility: 'internal' });
  assert.equal((await api('POST', `/groups/${group.id}/members`, { user_id: reader.id, access_level: 20 }, ownerToken)).statusCode, 201);
  const created = await api('POST', '/projects', { name: 'moving', visibility: 'public' }, ownerToken);
  assert.equal(created.statusCode, 201);
  const project = created.json();
  const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  const gitDir = path.join(t.config.storages.find((s) => s.name === row.repository_storage)!.path, row.disk_path);
  await fillRepository(gitDir, 'moving');
  const head = git(gitDir, 'rev-parse', 'main').trim();
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, readerToken)).json().permissions.group_access, null);

  const moved = await api('PUT', `/projects/${project.id}/transfer`, { namespace: group.id }, ownerToken);
  assert.equal(moved.statusCode, 200, moved.body);
  assert.equal(moved.json().namespace.full_path, 'team');
  assert.equal(moved.json().path_with_namespace, 'team/moving');
  // No more visible than its group (update_namespace_and_visibility).
  assert.equal(moved.json().visibility, 'internal');
  // The group's members now reach it by inheritance.
  const asReader = await api('GET', `/projects/${project.id}`, undefined, readerToken);
  assert.equal(asReader.json().permissions.group_access.access_level, 20);
  // The old path reaches the project, for the API and for git.
  const byOld = await api('GET', `/projects/${encodeURIComponent('olivia/moving')}`, undefined, ownerToken);
  assert.equal(byOld.statusCode, 200);
  assert.equal(byOld.json().id, project.id);
  assert.equal(await cloneHead('olivia/moving', ownerToken, 'olivia'), head);
  assert.equal(await cloneHead('team/moving', ownerToken, 'olivia'), head);

  // And back to the personal namespace, by path: the group's path now redirects, the old one is live again.
  const back = await api('PUT', `/projects/${project.id}/transfer`, { namespace: 'olivia' }, ownerToken);
  assert.equal(back.statusCode, 200, back.body);
  assert.equal(back.json().namespace.path, 'olivia');
  assert.equal(back.json().visibility, 'internal');
  assert.equal((await api('GET', `/projects/${encodeURIComponent('team/moving')}`, undefined, ownerToken)).json().path_with_namespace, 'olivia/moving');
  assert.equal(await cloneHead('team/moving', ownerToken, 'olivia'), head);
  const redirects = await t.db.selectFrom('redirect_routes').select('path').where('project_id', '=', project.id).execute();
  assert.deepEqual(redirects.map((r) => r.path), ['team/moving']);
  // Inherited access went with the group; the internal project is still readable by visibility.
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, readerToken)).json().permissions.group_access, null);

  // A new project at a redirected path takes the path over.
  const squatter = await api('POST', '/projects', { name: 'moving', namespace_id: group.id }, ownerToken);
  assert.equal(squatter.statusCode, 201);
  assert.equal((await api('GET', `/projects/${encodeURIComponent('team/moving')}`, undefined, ownerToken)).json().id, squatter.json().id);
});

test('project transfer refusals', async () => {
  const group = await newGroup('elsewhere');
  const p = (await api('POST', '/projects', { name: 'stay' }, ownerToken)).json();
  const fail = (message: string) => ({ message: `Failed to transfer project {:new_namespace=>[${JSON.stringify(message)}]}` });

  const missing = await api('PUT', `/projects/${p.id}/transfer`, {}, ownerToken);
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(missing.json(), { message: '400 Bad request - "namespace" not given' });
  assert.equal((await api('PUT', `/projects/${p.id}/transfer`, { namespace: 'nope' }, ownerToken)).statusCode, 404);
  // Another user's personal namespace is not there for the caller.
  const other = await api('PUT', `/projects/${p.id}/transfer`, { namespace: 'rita' }, ownerToken);
  assert.equal(other.statusCode, 404);
  assert.deepEqual(other.json(), { message: '404 Namespace Not Found' });
  const same = await api('PUT', `/projects/${p.id}/transfer`, { namespace: 'olivia' }, ownerToken);
  assert.equal(same.statusCode, 400);
  assert.deepEqual(same.json(), fail('Transfer failed, please contact an admin.'));

  // A Developer of the target group may not move projects into it.
  const theirs = await newGroup('theirs', {}, readerToken);
  assert.equal((await api('POST', `/groups/${theirs.id}/members`, { user_id: owner.id, access_level: 30 }, readerToken)).statusCode, 201);
  const dev = await api('PUT', `/projects/${p.id}/transfer`, { namespace: theirs.id }, ownerToken);
  assert.equal(dev.statusCode, 400);
  assert.deepEqual(dev.json(), fail('Transfer failed, please contact an admin.'));

  // Same path in the target.
  assert.equal((await api('POST', '/projects', { name: 'stay', namespace_id: group.id }, ownerToken)).statusCode, 201);
  const taken = await api('PUT', `/projects/${p.id}/transfer`, { namespace: group.id }, ownerToken);
  assert.equal(taken.statusCode, 400);
  assert.deepEqual(taken.json(), fail('Project with same name or path in target namespace already exists'));

  // Only Owners (change_namespace).
  assert.equal((await api('POST', `/projects/${p.id}/members`, { user_id: reader.id, access_level: 40 }, ownerToken)).statusCode, 201);
  assert.equal((await api('PUT', `/projects/${p.id}/transfer`, { namespace: theirs.id }, readerToken)).statusCode, 403);
});

test('a group below another and back to the top level; its projects keep their old paths as redirects', async () => {
  const parent = await newGroup('parent-group', { visibility: 'private' });
  const child = await newGroup('wandering', { visibility: 'public' });
  const sub = (await api('POST', '/groups', { name: 'inner', path: 'inner', parent_id: child.id, visibility: 'public' }, ownerToken)).json();
  const p = (await api('POST', '/projects', { name: 'deep', namespace_id: sub.id, visibility: 'public' }, ownerToken)).json();

  const moved = await api('POST', `/groups/${child.id}/transfer`, { group_id: parent.id }, ownerToken);
  assert.equal(moved.statusCode, 201, moved.body);
  assert.equal(moved.json().full_path, 'parent-group/wandering');
  assert.equal(moved.json().parent_id, parent.id);
  assert.equal(moved.json().visibility, 'private');
  const project = (await api('GET', `/projects/${p.id}`, undefined, ownerToken)).json();
  assert.equal(project.path_with_namespace, 'parent-group/wandering/inner/deep');
  assert.equal(project.visibility, 'private');
  assert.equal((await api('GET', `/projects/${encodeURIComponent('wandering/inner/deep')}`, undefined, ownerToken)).json().id, p.id);

  const refusals: [object, string][] = [
    [{ group_id: parent.id }, 'Transfer failed: Group is already associated to the parent group.'],
    [{ group_id: sub.id }, 'Transfer failed: Cannot transfer group to one of its subgroup.'],
  ];
  for (const [payload, message] of refusals) {
    const r = await api('POST', `/groups/${child.id}/transfer`, payload, ownerToken);
    assert.equal(r.statusCode, 400);
    assert.deepEqual(r.json(), { message });
  }
  const rootAlready = await api('POST', `/groups/${parent.id}/transfer`, {}, ownerToken);
  assert.deepEqual(rootAlready.json(), { message: 'Transfer failed: Group is already a root group.' });
  const clash = await newGroup('clash');
  assert.equal((await api('POST', '/groups', { name: 'wandering', path: 'wandering', parent_id: clash.id }, ownerToken)).statusCode, 201);
  const samePath = await api('POST', `/groups/${child.id}/transfer`, { group_id: clash.id }, ownerToken);
  assert.deepEqual(samePath.json(), { message: 'Transfer failed: The parent group already has a subgroup or a project with the same path.' });
  // A non-member of the group: 404; a member who is not its Owner: 403.
  assert.equal((await api('POST', `/groups/${child.id}/transfer`, {}, readerToken)).statusCode, 404);

  const top = await api('POST', `/groups/${child.id}/transfer`, {}, ownerToken);
  assert.equal(top.statusCode, 201, top.body);
  assert.equal(top.json().full_path, 'wandering');
  assert.equal(top.json().parent_id, null);
  assert.equal((await api('GET', `/projects/${encodeURIComponent('parent-group/wandering/inner/deep')}`, undefined, ownerToken)).json().id, p.id);
  assert.equal((await api('GET', `/projects/${encodeURIComponent('wandering/inner/deep')}`, undefined, ownerToken)).json().path_with_namespace, 'wandering/inner/deep');
});

test('a new path keeps the old one as a redirect', async () => {
  const p = (await api('POST', '/projects', { name: 'before-rename' }, ownerToken)).json();
  const r = await api('PUT', `/projects/${p.id}`, { path: 'after-rename' }, ownerToken);
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().path_with_namespace, 'olivia/after-rename');
  const old = await api('GET', `/projects/${encodeURIComponent('olivia/before-rename')}`, undefined, ownerToken);
  assert.equal(old.statusCode, 200);
  assert.equal(old.json().id, p.id);
  // A project created at the old path takes it over.
  const newcomer = (await api('POST', '/projects', { name: 'newcomer', path: 'before-rename' }, ownerToken)).json();
  assert.equal((await api('GET', `/projects/${encodeURIComponent('olivia/before-rename')}`, undefined, ownerToken)).json().id, newcomer.id);
});
