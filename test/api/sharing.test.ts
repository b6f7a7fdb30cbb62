/**
 * Sharing with groups (issue 32, item 2): a private project shared with a group is readable by
 * that group's members at the lower of their level and the link's (every permission check, the
 * project lists, /members/all, shared_with_groups), an expired link gives nothing, unsharing takes
 * it back; a group shared with a group gives access to its projects; GET /projects/:id/groups.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

let t: TestApp;
let owner: UserRow;
let ownerToken: string;
let guestUser: UserRow;
let guestToken: string;
let outsiderToken: string;

before(async () => {
  t = await startTestApp();
  owner = await createUser(t.db, { username: 'owen' });
  ownerToken = await createToken(t.db, owner);
  guestUser = await createUser(t.db, { username: 'gina' });
  guestToken = await createToken(t.db, guestUser);
  outsiderToken = await createToken(t.db, await createUser(t.db, { username: 'otto' }));
});
after(async () => {
  await t.close();
});

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: `/api/v4${url}`, ...(payload ? { payload } : {}), token });

async function newGroup(pathName: string, token = ownerToken, extra: object = {}) {
  const r = await api('POST', '/groups', { name: pathName, path: pathName, ...extra }, token);
  assert.equal(r.statusCode, 201, r.body);
  return r.json();
}

test('a project shared with a group: access for its members, capped by the link, shown and taken back', async () => {
  const readers = await newGroup('readers', guestToken);
  const project = (await api('POST', '/projects', { name: 'secret', visibility: 'private', initialize_with_readme: true }, ownerToken)).json();
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, guestToken)).statusCode, 404);

  // Maintainers share; the group must be readable by the caller.
  const bad = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 50 }, ownerToken);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'group_access does not have a valid value' });
  const hidden = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 20 }, ownerToken);
  assert.equal(hidden.statusCode, 404, 'a private group the caller cannot read');
  assert.deepEqual(hidden.json(), { message: 'Not Found' });
  assert.equal((await api('POST', `/groups/${readers.id}/members`, { user_id: owner.id, access_level: 10 }, guestToken)).statusCode, 201);
  const shared = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 20 }, ownerToken);
  assert.equal(shared.statusCode, 201, shared.body);
  assert.deepEqual(shared.json(), { id: shared.json().id, project_id: project.id, group_id: readers.id, group_access: 20, expires_at: null });
  const again = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 30 }, ownerToken);
  assert.equal(again.statusCode, 409);
  assert.deepEqual(again.json(), { message: 'Group already shared with this group' });
  assert.equal((await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 20 }, guestToken)).statusCode, 403);

  // Gina owns `readers`: through the link she is a Reporter of the project (the link's level).
  const seen = await api('GET', `/projects/${project.id}`, undefined, guestToken);
  assert.equal(seen.statusCode, 200);
  // The link counts in what the entity shows: a Reporter reads the code, so default_branch is there.
  assert.equal(seen.json().default_branch, 'main');
  assert.deepEqual(seen.json().shared_with_groups, [{
    group_id: readers.id, group_name: 'readers', group_full_path: 'readers', group_access_level: 20, expires_at: null,
  }]);
  assert.equal((await api('GET', `/projects/${project.id}/repository/files/README.md?ref=main`, undefined, guestToken)).statusCode, 200);
  // Reporter, not Developer: no branch creation, no member management.
  assert.equal((await api('POST', `/projects/${project.id}/repository/branches`, { branch: 'x', ref: 'main' }, guestToken)).statusCode, 403);
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, outsiderToken)).statusCode, 404);
  const listed = (await api('GET', '/projects?membership=true', undefined, guestToken)).json();
  assert.ok(listed.some((p: { id: number }) => p.id === project.id));
  // /members/all: the shared group's members, at the lower level.
  const all = (await api('GET', `/projects/${project.id}/members/all`, undefined, guestToken)).json();
  const gina = all.find((m: { username: string }) => m.username === 'gina');
  assert.equal(gina.access_level, 20);
  assert.equal(all.find((m: { username: string }) => m.username === 'owen').access_level, 50);
  const one = await api('GET', `/projects/${project.id}/members/all/${guestUser.id}`, undefined, guestToken);
  assert.equal(one.json().access_level, 20);

  const groups = (await api('GET', `/projects/${project.id}/groups?with_shared=true`, undefined, guestToken)).json();
  assert.deepEqual(groups.map((g: { full_path: string }) => g.full_path), ['readers']);
  assert.deepEqual((await api('GET', `/projects/${project.id}/groups`, undefined, guestToken)).json(), []);

  assert.equal((await api('DELETE', `/projects/${project.id}/share/${readers.id}`, undefined, ownerToken)).statusCode, 204);
  assert.equal((await api('DELETE', `/projects/${project.id}/share/${readers.id}`, undefined, ownerToken)).statusCode, 404);
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, guestToken)).statusCode, 404);

  // An expired link gives nothing.
  const expired = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 30, expires_at: '2020-01-01' }, ownerToken);
  assert.equal(expired.statusCode, 201, expired.body);
  assert.equal(expired.json().expires_at, '2020-01-01');
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, guestToken)).statusCode, 404);
  assert.ok(!(await api('GET', `/projects/${project.id}/members/all`, undefined, ownerToken)).json().some((m: { username: string }) => m.username === 'gina'));
  await api('DELETE', `/projects/${project.id}/share/${readers.id}`, undefined, ownerToken);
  const future = await api('POST', `/projects/${project.id}/share`, { group_id: readers.id, group_access: 30, expires_at: '2999-01-01' }, ownerToken);
  assert.equal(future.statusCode, 201);
  assert.equal((await api('GET', `/projects/${project.id}`, undefined, guestToken)).statusCode, 200);
  assert.equal((await api('POST', `/projects/${project.id}/repository/branches`, { branch: 'y', ref: 'main' }, guestToken)).statusCode, 201);
});

test('a project cannot be shared with its own group', async () => {
  const home = await newGroup('home');
  const p = (await api('POST', '/projects', { name: 'inside', namespace_id: home.id }, ownerToken)).json();
  const r = await api('POST', `/projects/${p.id}/share`, { group_id: home.id, group_access: 30 }, ownerToken);
  assert.equal(r.statusCode, 409);
  assert.deepEqual(r.json(), { message: 'Project cannot be shared with the group it is in or one of its ancestors.' });
});

test('a group shared with a group: its projects and sub-groups for the other group members', async () => {
  const shared = await newGroup('vault');
  const sub = (await api('POST', '/groups', { name: 'inner-vault', path: 'inner-vault', parent_id: shared.id }, ownerToken)).json();
  const p = (await api('POST', '/projects', { name: 'gold', namespace_id: sub.id }, ownerToken)).json();
  const guests = await newGroup('visitors', guestToken);
  assert.equal((await api('GET', `/projects/${p.id}`, undefined, guestToken)).statusCode, 404);

  const missing = await api('POST', `/groups/${shared.id}/share`, { group_id: 999999, group_access: 30 }, ownerToken);
  assert.equal(missing.statusCode, 404);
  // The other group must be readable by the caller: Owen is not in the private `visitors`.
  assert.equal((await api('POST', `/groups/${shared.id}/share`, { group_id: guests.id, group_access: 30 }, ownerToken)).statusCode, 404);
  const r = await api('POST', `/groups/${shared.id}/share`, { group_id: guests.id, group_access: 30 });
  assert.equal(r.statusCode, 201, r.body);
  assert.deepEqual(r.json().shared_with_groups, [{
    group_id: guests.id, group_name: 'visitors', group_full_path: 'visitors', group_access_level: 30, expires_at: null,
  }]);
  assert.equal((await api('POST', `/groups/${shared.id}/share`, { group_id: guests.id, group_access: 30 })).statusCode, 409);

  // Gina (Owner of visitors) is a Developer of vault's tree.
  const seen = await api('GET', `/projects/${p.id}`, undefined, guestToken);
  assert.equal(seen.statusCode, 200);
  assert.equal((await api('GET', `/groups/${sub.id}`, undefined, guestToken)).statusCode, 200);
  assert.ok((await api('GET', '/groups', undefined, guestToken)).json().some((g: { id: number }) => g.id === shared.id));
  const members = (await api('GET', `/groups/${sub.id}/members/all`, undefined, guestToken)).json();
  assert.equal(members.find((m: { username: string }) => m.username === 'gina').access_level, 30);
  assert.equal((await api('POST', `/projects/${p.id}/members`, { user_id: owner.id, access_level: 30 }, guestToken)).statusCode, 403);

  // Only Owners of the shared group unshare.
  assert.equal((await api('DELETE', `/groups/${shared.id}/share/${guests.id}`, undefined, guestToken)).statusCode, 403);
  assert.equal((await api('DELETE', `/groups/${shared.id}/share/${guests.id}`, undefined, ownerToken)).statusCode, 204);
  assert.equal((await api('DELETE', `/groups/${shared.id}/share/${guests.id}`, undefined, ownerToken)).statusCode, 404);
  assert.deepEqual((await api('GET', `/groups/${shared.id}`, undefined, ownerToken)).json().shared_with_groups, []);
  assert.equal((await api('GET', `/projects/${p.id}`, undefined, guestToken)).statusCode, 404);
});
