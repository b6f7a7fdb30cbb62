/**
 * What authentication does with the user behind a valid credential: the refusal texts of
 * reference §1.8, the instance switch for impersonation tokens, activity and token-use
 * bookkeeping, and revocation through the credential cache.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NewUser } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createOauthToken, createToken, createUser } from '../helpers/factories.ts';

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

const REFUSALS: { state: string; attrs: Partial<NewUser>; message: string }[] = [
  { state: 'blocked', attrs: { state: 'blocked' }, message: '403 Forbidden - Your account has been blocked.' },
  { state: 'ldap_blocked', attrs: { state: 'ldap_blocked' }, message: '403 Forbidden - Your account has been blocked.' },
  { state: 'banned', attrs: { state: 'banned' }, message: '403 Forbidden - Your account has been blocked.' },
  {
    state: 'blocked_pending_approval', attrs: { state: 'blocked_pending_approval' },
    message: '403 Forbidden - Your account is pending approval from your administrator and hence blocked.',
  },
  {
    state: 'deactivated', attrs: { state: 'deactivated' },
    message: '403 Forbidden - Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account at http://kiln.test',
  },
  { state: 'internal (ghost)', attrs: { user_type: 5 }, message: '403 Forbidden - This action cannot be performed by internal users' },
  {
    state: 'password expired', attrs: { password_expires_at: new Date(Date.now() - 60_000).toISOString() },
    message: '403 Forbidden - Your password expired. Please access Service from a web browser to update your password.',
  },
];

describe('authentication: the user behind the credential', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  for (const r of REFUSALS) {
    it(`refuses a ${r.state} user holding a valid token with 403`, async () => {
      const user = await createUser(t.db, r.attrs);
      for (const headers of [{ 'private-token': await createToken(t.db, user) }, { authorization: `Bearer ${await createOauthToken(t.db, user)}` }]) {
        const res = await t.request({ url: '/api/v4/user', headers });
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), { message: r.message });
      }
    });
  }

  it('refuses a blocked user before looking at the token scopes, as the Service does', async () => {
    const user = await createUser(t.db, { state: 'blocked' });
    const res = await t.request({ url: '/api/v4/user', token: await createToken(t.db, user, { scopes: ['read_repository'] }) });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  });

  it('lets a user whose password was set automatically through despite its expiry', async () => {
    const user = await createUser(t.db, { password_expires_at: new Date(Date.now() - 60_000).toISOString(), password_automatically_set: 1 });
    assert.equal((await t.request({ url: '/api/v4/user', token: await createToken(t.db, user) })).statusCode, 200);
  });

  it('sets last_activity_on on the first authenticated request of the day, and only then', async () => {
    const user = await createUser(t.db, { last_activity_on: daysAgo(3) });
    const pat = await createToken(t.db, user);
    const first = await t.request({ url: '/api/v4/user', token: pat });
    assert.equal(first.statusCode, 200);
    const row = await t.db.selectFrom('users').select('last_activity_on').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.last_activity_on, today());

    // Put an old date back behind the server's back: later requests today do not write again.
    await t.db.updateTable('users').set({ last_activity_on: daysAgo(3) }).where('id', '=', user.id).execute();
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    const again = await t.db.selectFrom('users').select('last_activity_on').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(again.last_activity_on, daysAgo(3));
  });

  it('records last_activity_on for a user who never had any', async () => {
    const user = await createUser(t.db);
    await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${await createOauthToken(t.db, user)}` } });
    const row = await t.db.selectFrom('users').select('last_activity_on').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.last_activity_on, today());
  });

  it('records last_used_at of a personal access token', async () => {
    const user = await createUser(t.db);
    const pat = await createToken(t.db, user, { name: 'used' });
    const before = Date.now();
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    const row = await t.db.selectFrom('personal_access_tokens').select('last_used_at')
      .where('user_id', '=', user.id).where('name', '=', 'used').executeTakeFirstOrThrow();
    assert.ok(row.last_used_at, 'last_used_at is set');
    assert.ok(Date.parse(row.last_used_at) >= before - 1000 && Date.parse(row.last_used_at) <= Date.now());
  });

  // As the Service's PersonalAccessTokens::LastUsedService: at most every 10 minutes. A write
  // would move the write epoch and empty every remembered row, so reads must not write.
  it('writes last_used_at again only after 10 minutes, whichever process wrote it', async () => {
    const user = await createUser(t.db);
    const pat = await createToken(t.db, user, { name: 'interval' });
    const lastUsed = async () => (await t.db.selectFrom('personal_access_tokens').select('last_used_at')
      .where('user_id', '=', user.id).executeTakeFirstOrThrow()).last_used_at;
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    const first = await lastUsed();
    assert.ok(first);
    const epoch = t.writes.value;
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    // A credential read afresh (its cache entry expired, or another process wrote the value) too.
    t.app.kiln.authCache.clear();
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    assert.equal(t.writes.value, epoch, 'reads within the interval wrote nothing');
    assert.equal(await lastUsed(), first);

    const elevenMinutesAgo = new Date(Date.now() - 11 * 60_000).toISOString();
    await t.db.updateTable('personal_access_tokens').set({ last_used_at: elevenMinutesAgo }).where('user_id', '=', user.id).execute();
    t.app.kiln.authCache.clear();
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    assert.ok(Date.parse((await lastUsed())!) > Date.parse(elevenMinutesAgo) + 60_000, 'an old value is written again');
  });

  it('stores tokens only as digests', async () => {
    const user = await createUser(t.db);
    const pat = await createToken(t.db, user);
    const rows = await t.db.selectFrom('personal_access_tokens').select('token_digest').where('user_id', '=', user.id).execute();
    assert.equal(rows.length, 1);
    assert.match(rows[0].token_digest, /^[0-9a-f]{64}$/);
    assert.notEqual(rows[0].token_digest, pat);
  });

  it('takes a revocation at once when the token is invalidated in the cache', async () => {
    const user = await createUser(t.db);
    const pat = await createToken(t.db, user, { name: 'to-revoke' });
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    const row = await t.db.updateTable('personal_access_tokens').set({ revoked: 1 })
      .where('user_id', '=', user.id).where('name', '=', 'to-revoke').returning('id').executeTakeFirstOrThrow();
    t.app.kiln.authCache.invalidateToken('personal_access_token', row.id);
    const res = await t.request({ url: '/api/v4/user', token: pat });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
  });

  it('takes a deleted token at once: 401 Unauthorized', async () => {
    const user = await createUser(t.db);
    const oauth = await createOauthToken(t.db, user);
    const bearer = { authorization: `Bearer ${oauth}` };
    assert.equal((await t.request({ url: '/api/v4/user', headers: bearer })).statusCode, 200);
    const row = await t.db.deleteFrom('oauth_access_tokens').where('resource_owner_id', '=', user.id).returning('id').executeTakeFirstOrThrow();
    t.app.kiln.authCache.invalidateToken('oauth_token', row.id);
    const res = await t.request({ url: '/api/v4/user', headers: bearer });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  });

  it('takes a block at once when the user is invalidated in the cache', async () => {
    const user = await createUser(t.db);
    const pat = await createToken(t.db, user);
    assert.equal((await t.request({ url: '/api/v4/user', token: pat })).statusCode, 200);
    await t.db.updateTable('users').set({ state: 'blocked' }).where('id', '=', user.id).execute();
    t.app.kiln.authCache.invalidateUser(user.id);
    const res = await t.request({ url: '/api/v4/user', token: pat });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  });

  it('answers GET /user for an administrator with the admin view', async () => {
    const admin = await createAdmin(t.db);
    const res = await t.request({ url: '/api/v4/user', token: await createToken(t.db, admin) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().is_admin, true);
    const user = await createUser(t.db);
    const plain = await t.request({ url: '/api/v4/user', token: await createToken(t.db, user) });
    assert.equal(plain.json().is_admin, undefined);
    assert.equal(plain.json().email, user.email);
  });
});

describe('authentication with impersonation disabled', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_IMPERSONATION_ENABLED: 'false' }); });
  after(async () => { await t.close(); });

  it('refuses impersonation tokens with 401 invalid_token, whatever their scopes', async () => {
    const user = await createUser(t.db);
    for (const scopes of [['api'], ['read_repository']]) {
      const token = await createToken(t.db, user, { impersonation: true, scopes });
      const res = await t.request({ url: '/api/v4/user', token });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: 'invalid_token', error_description: 'Token is an impersonation token but impersonation was disabled.' });
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="", error="invalid_token", error_description="Token is an impersonation/);
    }
  });

  it('still accepts personal access tokens', async () => {
    const user = await createUser(t.db);
    assert.equal((await t.request({ url: '/api/v4/user', token: await createToken(t.db, user) })).statusCode, 200);
  });
});
