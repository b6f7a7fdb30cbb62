/**
 * Members of projects and groups (POST/GET/PUT/DELETE …/members[/:user_id]) and the
 * administrators' GET /users/:id/memberships.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('members and memberships', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let dev: UserRow;
  let devToken: string;
  let other: UserRow;
  let projectId: number;
  let groupId: number;

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    dev = await createUser(t.db);
    devToken = await createToken(t.db, dev);
    other = await createUser(t.db);
    projectId = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Members' } })).json().id;
    groupId = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Crew', path: `crew-${owner.id}` } })).json().id;
  });
  after(async () => { await t.close(); });

  it('adds, shows, lists, changes and removes project members', async () => {
    const added = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: dev.id, access_level: 30, expires_at: '2099-01-31' } });
    assert.equal(added.statusCode, 201, added.body);
    const m = added.json();
    assert.equal(m.id, dev.id);
    assert.equal(m.username, dev.username);
    assert.equal(m.access_level, 30);
    assert.equal(m.expires_at, '2099-01-31');
    assert.equal(m.created_by.id, owner.id);
    assert.equal(m.membership_state, 'active');

    assert.deepEqual((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: dev.id, access_level: 30 } })).json(), { message: 'Member already exists' });
    assert.deepEqual((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: 999999, access_level: 30 } })).json(), { message: '404 User Not Found' });
    assert.deepEqual((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: other.id, access_level: 35 } })).json(), { message: { access_level: ['is not included in the list'] } });
    assert.deepEqual((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: other.id } })).json(), { message: '400 Bad request - "access_level" not given' });
    // A developer may read members but not manage them.
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: devToken, payload: { user_id: other.id, access_level: 10 } })).statusCode, 403);

    const list = await t.request({ url: `/api/v4/projects/${projectId}/members`, token: devToken });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((x: { id: number; access_level: number }) => [x.id, x.access_level]), [[owner.id, 50], [dev.id, 30]]);
    assert.equal(list.headers['x-total'], '2');
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${projectId}/members?query=${dev.username}`, token: devToken })).json().map((x: { id: number }) => x.id), [dev.id]);
    assert.equal((await t.request({ url: `/api/v4/projects/${projectId}/members/${dev.id}`, token: ownerToken })).json().access_level, 30);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${projectId}/members/${other.id}`, token: ownerToken })).json(), { message: '404 Not found' });

    const edited = await t.request({ method: 'PUT', url: `/api/v4/projects/${projectId}/members/${dev.id}`, token: ownerToken, payload: { access_level: 40 } });
    assert.equal(edited.statusCode, 200);
    assert.equal(edited.json().access_level, 40);
    // A maintainer may manage members but not grant Owner.
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: devToken, payload: { user_id: other.id, access_level: 50 } })).statusCode, 403);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: devToken, payload: { user_id: other.id, access_level: 10 } })).statusCode, 201);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}/members/${other.id}`, token: devToken })).statusCode, 204);
    assert.equal(await t.db.selectFrom('members').select('id').where('source_id', '=', projectId).where('user_id', '=', other.id).executeTakeFirst(), undefined);
    assert.deepEqual((await t.request({ method: 'DELETE', url: `/api/v4/projects/${projectId}/members/${other.id}`, token: devToken })).json(), { message: '404 Not found' });
    assert.equal((await t.request({ url: `/api/v4/projects/${projectId}/members`, token: await createToken(t.db, other) })).statusCode, 404);
  });

  it('keeps an owner in every group and lets members leave', async () => {
    const groupUrl = `/api/v4/groups/${groupId}/members`;
    assert.equal((await t.request({ method: 'POST', url: groupUrl, token: ownerToken, payload: { user_id: dev.id, access_level: 40 } })).statusCode, 201);
    // Maintainers of a group may not manage its members (Owner only).
    assert.equal((await t.request({ method: 'POST', url: groupUrl, token: devToken, payload: { user_id: other.id, access_level: 10 } })).statusCode, 403);
    assert.deepEqual((await t.request({ method: 'DELETE', url: `${groupUrl}/${owner.id}`, token: ownerToken })).json(), { message: '403 Forbidden' });
    assert.deepEqual((await t.request({ method: 'PUT', url: `${groupUrl}/${owner.id}`, token: ownerToken, payload: { access_level: 40 } })).json(), { message: '403 Forbidden' });
    // With a second owner, the first may go.
    assert.equal((await t.request({ method: 'PUT', url: `${groupUrl}/${dev.id}`, token: ownerToken, payload: { access_level: 50 } })).statusCode, 200);
    assert.equal((await t.request({ method: 'PUT', url: `${groupUrl}/${owner.id}`, token: ownerToken, payload: { access_level: 40 } })).json().access_level, 40);
    assert.equal((await t.request({ method: 'DELETE', url: `${groupUrl}/${owner.id}`, token: ownerToken })).statusCode, 204);
    assert.deepEqual((await t.request({ url: groupUrl, token: devToken })).json().map((x: { id: number }) => x.id), [dev.id]);
    // Group members inherit access to the group's projects.
    const inGroup = await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'Inherited', namespace_id: groupId } });
    assert.equal(inGroup.statusCode, 201, inGroup.body);
    assert.equal((await t.request({ method: 'POST', url: groupUrl, token: devToken, payload: { user_id: other.id, access_level: 20 } })).statusCode, 201);
    const otherToken = await createToken(t.db, other);
    assert.equal((await t.request({ url: `/api/v4/projects/${inGroup.json().id}`, token: otherToken })).statusCode, 200);
    assert.equal((await t.request({ method: 'PUT', url: `/api/v4/projects/${inGroup.json().id}`, token: otherToken, payload: { name: 'No' } })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: `${groupUrl}/${other.id}`, token: otherToken })).statusCode, 204);
    assert.equal((await t.request({ url: `/api/v4/projects/${inGroup.json().id}`, token: otherToken })).statusCode, 404);
  });

  it('lists a user\'s direct memberships for administrators', async () => {
    const url = `/api/v4/users/${dev.id}/memberships`;
    assert.equal((await t.request({ url })).statusCode, 401);
    assert.deepEqual((await t.request({ url, token: devToken })).json(), { message: '403 Forbidden' });
    assert.deepEqual((await t.request({ url: `${url}?type=Group`, token: devToken })).json(), { error: 'type does not have a valid value' });
    assert.deepEqual((await t.request({ url: '/api/v4/users/999999/memberships', token: ROOT_TOKEN })).json(), { message: '404 User Not Found' });
    const all = await t.request({ url, token: ROOT_TOKEN });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(all.json(), [
      { source_id: projectId, source_name: 'Members', source_type: 'Project', access_level: 40 },
      { source_id: groupId, source_name: 'Crew', source_type: 'Namespace', access_level: 50 },
    ]);
    assert.deepEqual((await t.request({ url: `${url}?type=Namespace`, token: ROOT_TOKEN })).json().map((m: { source_type: string }) => m.source_type), ['Namespace']);
    assert.deepEqual((await t.request({ url: `${url}?type=Project&per_page=1`, token: ROOT_TOKEN })).headers['x-total'], '1');
  });

  it('refuses to delete the sole owner of a group (409)', async () => {
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${dev.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 409);
    assert.deepEqual(res.json(), { message: 'User cannot be removed while is the sole-owner of a group' });
  });
});
