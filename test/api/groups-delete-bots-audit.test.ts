/**
 * What goes with a group (DELETE /groups/:id): the bots of its access tokens, of its sub-groups'
 * and of its projects' (their tokens stop working), and the deletion is recorded as an audit event
 * (the Service's EE Groups::DestroyService: AuditEventService :destroy, `remove: group`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('DELETE /groups/:id: resource bots and the audit event', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  const post = (url: string, payload: object, token = ownerToken) => t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
  const userExists = async (id: number) => (await t.db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  const accessToken = async (base: string, name: string) => {
    const res = await post(`${base}/access_tokens`, { name, scopes: ['api'], access_level: 30, expires_at: '2099-01-01' });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { token: string; user_id: number };
  };

  it('removes the bots of the group\'s, its sub-groups\' and its projects\' access tokens, and no one else', async () => {
    const group = (await post('/groups', { name: 'Doomed Group', path: 'doomed-group' })).json();
    const sub = (await post('/groups', { name: 'Doomed Sub', path: 'doomed-sub', parent_id: group.id })).json();
    const project = (await post('/projects', { name: 'Doomed Project', namespace_id: group.id })).json();
    const deep = (await post('/projects', { name: 'Deep Project', namespace_id: sub.id })).json();
    const elsewhere = (await post('/projects', { name: 'Survivor' })).json();
    const bots = [
      await accessToken(`/groups/${group.id}`, 'group bot'),
      await accessToken(`/groups/${sub.id}`, 'sub-group bot'),
      await accessToken(`/projects/${project.id}`, 'project bot'),
      await accessToken(`/projects/${deep.id}`, 'deep project bot'),
    ];
    const survivor = await accessToken(`/projects/${elsewhere.id}`, 'survivor bot');
    // A human member of the group stays a user.
    const member = await createUser(t.db);
    assert.equal((await post(`/groups/${group.id}/members`, { user_id: member.id, access_level: 30 })).statusCode, 201);
    for (const b of bots) assert.equal((await t.request({ url: '/api/v4/user', token: b.token })).statusCode, 200);

    const del = await t.request({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, token: ownerToken });
    assert.deepEqual([del.statusCode, del.json()], [202, { message: '202 Accepted' }]);

    for (const b of bots) {
      assert.equal(await userExists(b.user_id), false, 'the bot is deleted');
      const me = await t.request({ url: '/api/v4/user', token: b.token });
      assert.equal(me.statusCode, 401, 'its token no longer authenticates');
    }
    assert.equal(await userExists(survivor.user_id), true, 'another project\'s bot stays');
    assert.equal((await t.request({ url: `/api/v4/projects/${elsewhere.id}`, token: survivor.token })).statusCode, 200);
    assert.equal(await userExists(member.id), true);
    assert.equal(await userExists(owner.id), true);
  });

  it('records the deletion as an audit event on the group, with its full path', async () => {
    const parent = (await post('/groups', { name: 'Audited', path: 'audited' })).json();
    const group = (await post('/groups', { name: 'Audited Child', path: 'child', parent_id: parent.id })).json();
    const del = await t.request({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, token: ownerToken });
    assert.equal(del.statusCode, 202, del.body);

    const res = await t.request({ url: `/api/v4/audit_events?entity_type=Group&entity_id=${group.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200, res.body);
    const events = res.json();
    assert.equal(events.length, 1, res.body);
    const [event] = events;
    assert.equal(event.author_id, owner.id);
    assert.equal(event.entity_type, 'Group');
    assert.equal(event.entity_id, group.id);
    assert.equal(event.details.remove, 'group');
    assert.equal(event.details.author_name, owner.name);
    assert.equal(event.details.target_id, group.id);
    assert.equal(event.details.target_type, 'Group');
    assert.equal(event.details.target_details, 'audited/child');
    assert.equal(event.details.entity_path, 'audited/child');
  });

  it('records nothing and removes no bot when the deletion is refused', async () => {
    const group = (await post('/groups', { name: 'Kept', path: 'kept' })).json();
    const bot = await accessToken(`/groups/${group.id}`, 'kept bot');
    const maintainer = await createUser(t.db);
    const maintainerToken = await createToken(t.db, maintainer, { scopes: ['api'] });
    assert.equal((await post(`/groups/${group.id}/members`, { user_id: maintainer.id, access_level: 40 })).statusCode, 201);
    // Deleting a group takes Owner (admin_group).
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, token: maintainerToken })).statusCode, 403);
    assert.equal(await userExists(bot.user_id), true);
    const res = await t.request({ url: `/api/v4/audit_events?entity_type=Group&entity_id=${group.id}`, token: ROOT_TOKEN });
    assert.deepEqual(res.json().filter((e: { details: { remove?: string } }) => e.details.remove === 'group'), []);
  });
});
