import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createOauthToken, createToken, createUser } from '../helpers/factories.ts';

describe('/personal_access_tokens', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;
  let adminToken: string;
  const idOf = async (userId: number, name: string) =>
    (await t.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', userId).where('name', '=', name).executeTakeFirstOrThrow()).id;
  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice, { name: 'alice main' });
    await createToken(t.db, alice, { name: 'alice revoked', revoked: true });
    await createToken(t.db, alice, { name: 'alice expired', expiresAt: '2000-01-01' });
    await createToken(t.db, alice, { name: 'alice impersonation', impersonation: true });
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob, { name: 'bob main' });
    adminToken = await createToken(t.db, await createAdmin(t.db), { name: 'admin main' });
  });
  after(async () => { await t.close(); });

  const names = async (token: string, query = '') => {
    const res = await t.request({ url: `/api/v4/personal_access_tokens${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((x: { name: string }) => x.name);
  };

  it('lists a user\'s own personal access tokens, filtered by state and revoked', async () => {
    assert.deepEqual(await names(aliceToken), ['alice main', 'alice revoked', 'alice expired']);
    assert.deepEqual(await names(aliceToken, '?state=active'), ['alice main']);
    assert.deepEqual(await names(aliceToken, '?state=inactive'), ['alice revoked', 'alice expired']);
    assert.deepEqual(await names(aliceToken, '?revoked=true'), ['alice revoked']);
    assert.deepEqual(await names(aliceToken, `?user_id=${alice.id}&revoked=false`), ['alice main', 'alice expired']);
    const other = await t.request({ url: `/api/v4/personal_access_tokens?user_id=${bob.id}`, token: aliceToken });
    assert.deepEqual([other.statusCode, other.json()], [401, { message: '401 Unauthorized' }]);
    const page = await t.request({ url: '/api/v4/personal_access_tokens?per_page=1&page=2', token: aliceToken });
    assert.deepEqual(page.json().map((x: { name: string }) => x.name), ['alice revoked']);
    assert.equal(page.headers['x-total'], '3');
    assert.match(String(page.headers.link), /rel="prev", .*rel="next"/);
  });

  it('lists every user\'s tokens for administrators, filterable by user_id', async () => {
    const all = await names(adminToken);
    assert.ok(all.includes('bob main') && all.includes('alice impersonation') && all.includes('admin main'));
    assert.deepEqual(await names(adminToken, `?user_id=${alice.id}`), ['alice main', 'alice revoked', 'alice expired', 'alice impersonation']);
    assert.deepEqual(await names(adminToken, `?user_id=${alice.id}&state=active`), ['alice main', 'alice impersonation']);
    assert.deepEqual(await names(adminToken, '?user_id=999999'), []);
    const bad = await t.request({ url: '/api/v4/personal_access_tokens?state=expired', token: adminToken });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'state does not have a valid value' }]);
    assert.equal((await t.request({ url: '/api/v4/personal_access_tokens' })).statusCode, 401);
  });

  it('shows a token: own or any for administrators; others get 401, administrators 404', async () => {
    const bobId = await idOf(bob.id, 'bob main');
    const own = await t.request({ url: `/api/v4/personal_access_tokens/${bobId}`, token: bobToken });
    assert.equal(own.statusCode, 200);
    assert.deepEqual(Object.keys(own.json()).sort(), ['active', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'revoked', 'scopes', 'user_id']);
    assert.deepEqual([own.json().name, own.json().user_id, own.json().scopes], ['bob main', bob.id, ['api']]);
    assert.equal((await t.request({ url: `/api/v4/personal_access_tokens/${bobId}`, token: adminToken })).json().name, 'bob main');
    for (const id of [bobId, 999999]) {
      const res = await t.request({ url: `/api/v4/personal_access_tokens/${id}`, token: aliceToken });
      assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
    }
    const missing = await t.request({ url: '/api/v4/personal_access_tokens/999999', token: adminToken });
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not Found' }]);
    // `:id` is not declared by the Service: text is looked up as ActiveRecord casts it, never a 400.
    const text = await t.request({ url: '/api/v4/personal_access_tokens/abc', token: aliceToken });
    assert.deepEqual([text.statusCode, text.json()], [401, { message: '401 Unauthorized' }]);
    assert.equal((await t.request({ url: '/api/v4/personal_access_tokens/abc', token: adminToken })).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/personal_access_tokens/${bobId}x`, token: bobToken })).json().name, 'bob main');
    const self = await t.request({ url: '/api/v4/personal_access_tokens/self', token: aliceToken });
    assert.deepEqual([self.statusCode, self.json().name], [200, 'alice main']);
    const oauth = await t.request({ url: '/api/v4/personal_access_tokens/self', headers: { authorization: `Bearer ${await createOauthToken(t.db, alice)}` } });
    assert.deepEqual([oauth.statusCode, oauth.json()], [404, { message: '404 Not Found' }]);
  });

  it('revokes own tokens and, for administrators, anyone\'s; the token then gets 401', async () => {
    const spare = await createToken(t.db, bob, { name: 'bob spare' });
    const spareId = await idOf(bob.id, 'bob spare');
    const notMine = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${spareId}`, token: aliceToken });
    assert.deepEqual([notMine.statusCode, notMine.json()], [400, { message: '400 Bad request' }]);
    const missing = await t.request({ method: 'DELETE', url: '/api/v4/personal_access_tokens/999999', token: aliceToken });
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
    const text = await t.request({ method: 'DELETE', url: '/api/v4/personal_access_tokens/abc', token: aliceToken });
    assert.deepEqual([text.statusCode, text.json()], [404, { message: '404 Not found' }]);
    assert.equal((await t.request({ url: '/api/v4/user', token: spare })).statusCode, 200);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${spareId}`, token: bobToken });
    assert.equal(del.statusCode, 204);
    const after = await t.request({ url: '/api/v4/user', token: spare });
    assert.deepEqual([after.statusCode, after.json().error], [401, 'invalid_token']);

    const victim = await createToken(t.db, bob, { name: 'bob victim' });
    const byAdmin = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${await idOf(bob.id, 'bob victim')}`, token: ROOT_TOKEN });
    assert.equal(byAdmin.statusCode, 204);
    assert.equal((await t.request({ url: '/api/v4/user', token: victim })).statusCode, 401);
    // The revoke service's audit events, on the token's owner: the refused attempt too.
    const audit = (await t.request({ url: `/api/v4/audit_events?entity_type=User&entity_id=${bob.id}`, token: ROOT_TOKEN })).json() as
      { author_id: number; details: { custom_message: string; target_details: string } }[];
    const about = (id: number) => audit.filter((e) => / (\d+)( |$)/.exec(e.details.custom_message)?.[1] === String(id));
    assert.deepEqual(about(spareId).map((e) => [e.author_id, e.details.custom_message, e.details.target_details]), [
      [bob.id, `Revoked personal access token with id ${spareId}`, bob.username],
      [alice.id, `Attempted to revoke personal access token with id ${spareId} but failed with message: Not permitted to revoke`,
        bob.username],
    ]);
    // An impersonation token revoked here goes through the same service and is named the same way.
    await createToken(t.db, bob, { name: 'bob impersonated', impersonation: true });
    const impersonationId = await idOf(bob.id, 'bob impersonated');
    const revoked = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${impersonationId}`, token: ROOT_TOKEN });
    assert.equal(revoked.statusCode, 204);
    const latest = (await t.request({ url: `/api/v4/audit_events?entity_type=User&entity_id=${bob.id}`, token: ROOT_TOKEN })).json()[0];
    assert.equal(latest.details.custom_message, `Revoked personal access token with id ${impersonationId}`);
  });

  it('revokes the token in use with DELETE /personal_access_tokens/self', async () => {
    const token = await createToken(t.db, bob, { name: 'bob self' });
    const res = await t.request({ method: 'DELETE', url: '/api/v4/personal_access_tokens/self', token });
    assert.equal(res.statusCode, 204);
    const row = await t.db.selectFrom('personal_access_tokens').select('revoked').where('id', '=', await idOf(bob.id, 'bob self')).executeTakeFirstOrThrow();
    assert.equal(row.revoked, 1);
    const again = await t.request({ url: '/api/v4/personal_access_tokens/self', token });
    assert.deepEqual([again.statusCode, again.json().error_description], [401, 'Token was revoked. You have to re-authorize from the user.']);
  });

  it('refuses expired tokens', async () => {
    const expired = await createToken(t.db, bob, { expiresAt: new Date().toISOString().slice(0, 10) });
    const res = await t.request({ url: '/api/v4/personal_access_tokens/self', token: expired });
    assert.deepEqual([res.statusCode, res.json().error_description], [401, 'Token is expired. You can either do re-authorization or token refresh.']);
  });
});
