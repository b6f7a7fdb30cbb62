import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import type { NewUser } from '../../src/db/types.ts';
import { addDays, nowIso, todayDate } from '../../src/domain/clock.ts';
import { avatarDir } from '../../src/domain/users/avatar.ts';

describe('user state operations', () => {
  let t: TestApp;
  let userToken: string;
  before(async () => {
    t = await startTestApp();
    userToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const dormant = { last_activity_on: todayDate(addDays(new Date(), -100)) };
  const make = (attrs: Partial<NewUser> = {}) => createUser(t.db, attrs);
  const act = (id: number, action: string, token = ROOT_TOKEN) => t.request({ method: 'POST', url: `/api/v4/users/${id}/${action}`, token });
  const stateOf = async (id: number) => (await t.db.selectFrom('users').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;

  it('needs an administrator and an existing user', async () => {
    const u = await make();
    for (const action of ['block', 'unblock', 'deactivate', 'activate', 'ban', 'unban']) {
      const res = await act(u.id, action, userToken);
      assert.equal(res.statusCode, 403, action);
      assert.deepEqual(res.json(), { message: '403 Forbidden' });
      const missing = await act(999999, action);
      assert.equal(missing.statusCode, 404);
      assert.deepEqual(missing.json(), { message: '404 User Not Found' });
    }
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/block` })).statusCode, 401);
  });

  it('blocks: true, null when already blocked, 403 for LDAP-blocked and internal users', async () => {
    const u = await make();
    const token = await createToken(t.db, u);
    assert.equal((await t.request({ url: '/api/v4/user', token })).statusCode, 200);
    const res = await act(u.id, 'block');
    assert.equal(res.statusCode, 201);
    assert.equal(res.body, 'true');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(await stateOf(u.id), 'blocked');
    // The cached credential is dropped: the block applies to the next request.
    const refused = await t.request({ url: '/api/v4/user', token });
    assert.deepEqual(refused.json(), { message: '403 Forbidden - Your account has been blocked.' });
    assert.equal((await act(u.id, 'block')).body, 'null');
    const banned = await make({ state: 'banned' });
    assert.equal((await act(banned.id, 'block')).body, 'null');
    assert.equal(await stateOf(banned.id), 'banned');
    const ldap = await make({ state: 'ldap_blocked' });
    assert.deepEqual((await act(ldap.id, 'block')).json(), { message: '403 Forbidden - LDAP blocked users cannot be modified by the API' });
    const bot = await make({ user_type: 1 });
    const internal = await act(bot.id, 'block');
    assert.equal(internal.statusCode, 403);
    assert.deepEqual(internal.json(), { message: 'An internal user cannot be blocked' });
  });

  it('unblocks: true from blocked, banned or pending, false when active, 403 for LDAP-blocked and deactivated', async () => {
    for (const state of ['blocked', 'banned', 'blocked_pending_approval']) {
      const u = await make({ state });
      const res = await act(u.id, 'unblock');
      assert.equal(res.statusCode, 201);
      assert.equal(res.body, 'true');
      assert.equal(await stateOf(u.id), 'active');
    }
    assert.equal((await act((await make()).id, 'unblock')).body, 'false');
    assert.deepEqual((await act((await make({ state: 'ldap_blocked' })).id, 'unblock')).json(), { message: '403 Forbidden - LDAP blocked users cannot be unblocked by the API' });
    assert.deepEqual((await act((await make({ state: 'deactivated' })).id, 'unblock')).json(), { message: '403 Forbidden - Deactivated users cannot be unblocked by the API' });
  });

  it('deactivates only users without activity in the past 90 days', async () => {
    const idle = await make(dormant);
    const res = await act(idle.id, 'deactivate');
    assert.equal(res.statusCode, 201);
    assert.equal(res.body, 'true');
    assert.equal(await stateOf(idle.id), 'deactivated');
    assert.equal((await act(idle.id, 'deactivate')).body, 'null');
    const recent = await make({ last_activity_on: todayDate(addDays(new Date(), -10)) });
    assert.deepEqual((await act(recent.id, 'deactivate')).json(), { message: '403 Forbidden - The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated' });
    const signedIn = await make({ ...dormant, current_sign_in_at: addDays(new Date(), -5).toISOString() });
    assert.equal((await act(signedIn.id, 'deactivate')).statusCode, 403);
    assert.deepEqual((await act((await make({ ...dormant, state: 'blocked' })).id, 'deactivate')).json(), { message: '403 Forbidden - A blocked user cannot be deactivated by the API' });
    assert.deepEqual((await act((await make({ ...dormant, user_type: 2 })).id, 'deactivate')).json(), { message: '403 Forbidden - An internal user cannot be deactivated by the API' });
  });

  it('activates deactivated users; refuses blocked ones', async () => {
    const u = await make({ state: 'deactivated' });
    assert.equal((await act(u.id, 'activate')).body, 'true');
    assert.equal(await stateOf(u.id), 'active');
    assert.equal((await act(u.id, 'activate')).body, 'false');
    assert.deepEqual((await act((await make({ state: 'blocked' })).id, 'activate')).json(), { message: '403 Forbidden - A blocked user must be unblocked to be activated' });
  });

  it('bans active users and unbans banned ones', async () => {
    const u = await make();
    assert.equal((await act(u.id, 'ban')).body, 'true');
    assert.equal(await stateOf(u.id), 'banned');
    assert.deepEqual((await act(u.id, 'ban')).json(), { message: 'You cannot ban banned users.' });
    assert.equal((await act(u.id, 'unban')).body, 'true');
    assert.equal(await stateOf(u.id), 'active');
    assert.deepEqual((await act(u.id, 'unban')).json(), { message: 'You cannot unban active users.' });
    assert.deepEqual((await act((await make({ state: 'blocked_pending_approval' })).id, 'ban')).json(), { message: 'You cannot ban blocked pending approval users.' });
  });

  it('approves pending users (201) and refuses the rest (403 blocked, 409 not pending, 404)', async () => {
    const u = await make({ state: 'blocked_pending_approval' });
    const denied = await act(u.id, 'approve', userToken);
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { message: 'You are not allowed to approve a user' });
    const res = await act(u.id, 'approve');
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), { message: 'Success' });
    assert.equal(await stateOf(u.id), 'active');
    // The spec's guard table: blocked by an administrator or LDAP → 403; deactivated or not pending → 409.
    for (const [state, status] of [['active', 409], ['deactivated', 409], ['banned', 409], ['blocked', 403], ['ldap_blocked', 403]] as const) {
      const target = await make({ state });
      const other = await act(target.id, 'approve');
      assert.equal(other.statusCode, status, state);
      assert.deepEqual(other.json(), { message: 'The user you are trying to approve is not pending approval' });
      assert.equal(await stateOf(target.id), state);
    }
    assert.deepEqual((await act(999999, 'approve')).json(), { message: '404 User Not Found' });
  });

  it('rejects pending users by deleting them (200)', async () => {
    const u = await make({ state: 'blocked_pending_approval' });
    assert.deepEqual((await act(u.id, 'reject', userToken)).json(), { message: 'You are not allowed to reject a user' });
    const res = await act(u.id, 'reject');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { message: 'Success' });
    assert.equal(await t.db.selectFrom('users').select('id').where('id', '=', u.id).executeTakeFirst(), undefined);
    const active = await act((await make()).id, 'reject');
    assert.equal(active.statusCode, 409);
    assert.deepEqual(active.json(), { message: 'User does not have a pending request' });
    assert.equal((await act(999999, 'reject')).statusCode, 404);
  });

  it('deletes users, creating the ghost user on a soft delete', async () => {
    const u = await make();
    const token = await createToken(t.db, u);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${u.id}`, token: userToken })).statusCode, 403);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(await t.db.selectFrom('namespaces').select('id').where('owner_id', '=', u.id).executeTakeFirst(), undefined);
    assert.equal((await t.request({ url: '/api/v4/user', token })).statusCode, 401);
    const ghost = await t.db.selectFrom('users').selectAll().where('user_type', '=', 5).execute();
    assert.equal(ghost.length, 1);
    assert.equal(ghost[0].username, 'ghost');
    assert.equal(ghost[0].name, 'Ghost User');
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${ghost[0].id}`, token: ROOT_TOKEN })).statusCode, 403);
    const hard = await make({ avatar: 'a.png' });
    const dir = avatarDir(t.dataDir, hard.id);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'a.png'), 'png');
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${hard.id}?hard_delete=true`, token: ROOT_TOKEN })).statusCode, 204);
    await assert.rejects(fs.stat(dir));
    assert.equal((await t.db.selectFrom('users').select('id').where('user_type', '=', 5).execute()).length, 1);
    assert.deepEqual((await t.request({ method: 'DELETE', url: '/api/v4/users/999999', token: ROOT_TOKEN })).json(), { message: '404 User Not Found' });
  });

  it('honours If-Unmodified-Since on DELETE', async () => {
    const u = await make();
    const stale = new Date(Date.parse(u.updated_at) - 60_000).toUTCString();
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN, headers: { 'if-unmodified-since': stale } });
    assert.equal(res.statusCode, 412);
    assert.deepEqual(res.json(), { message: '412 Precondition Failed' });
    const fresh = new Date(Date.now() + 60_000).toUTCString();
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${u.id}`, token: ROOT_TOKEN, headers: { 'if-unmodified-since': fresh } })).statusCode, 204);
  });

  it('refuses to delete the sole owner of a group unless hard_delete', async () => {
    const owner = await make();
    const now = nowIso();
    const group = await t.db.insertInto('namespaces').values({ name: 'Solo', path: 'solo-group', kind: 'group', owner_id: null, parent_id: null, created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow();
    await t.db.insertInto('members').values({
      source_type: 'Namespace', source_id: group.id, user_id: owner.id, access_level: 50, expires_at: null, created_by_id: null, created_at: now, updated_at: now,
    }).execute();
    const res = await t.request({ method: 'DELETE', url: `/api/v4/users/${owner.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 409);
    assert.deepEqual(res.json(), { message: 'User cannot be removed while is the sole-owner of a group' });
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${owner.id}?hard_delete=true`, token: ROOT_TOKEN })).statusCode, 204);
  });

  it('disables two-factor authentication', async () => {
    const u = await make({ otp_required_for_login: 1 });
    const url = `/api/v4/users/${u.id}/disable_two_factor`;
    assert.equal((await t.request({ method: 'PATCH', url, token: userToken })).statusCode, 403);
    const res = await t.request({ method: 'PATCH', url, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    const again = await t.request({ method: 'PATCH', url, token: ROOT_TOKEN });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: '400 Bad request - Two-factor authentication is not enabled for this user' });
    const admin = await createAdmin(t.db, { otp_required_for_login: 1 });
    assert.deepEqual((await t.request({ method: 'PATCH', url: `/api/v4/users/${admin.id}/disable_two_factor`, token: ROOT_TOKEN })).json(),
      { message: '403 Forbidden - Two-factor authentication for admins cannot be disabled via the API. Use the Rails console' });
    assert.equal((await t.request({ method: 'PATCH', url: '/api/v4/users/999999/disable_two_factor', token: ROOT_TOKEN })).statusCode, 404);
  });
});
