import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { sshFingerprints, sshPublicKey } from '../helpers/keys.ts';

const KEY_FIELDS = ['created_at', 'expires_at', 'id', 'key', 'title', 'usage_type'];

describe('SSH keys of the current user (/user/keys)', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;
  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db, { name: 'Alice Example' });
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
  });
  after(async () => { await t.close(); });

  it('adds a key, answering the publishable key with the comment replaced', async () => {
    const line = sshPublicKey('ed25519', 'alice@secret-laptop');
    const res = await t.request({ method: 'POST', url: '/api/v4/user/keys', token: aliceToken, payload: { title: 'laptop', key: line } });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), KEY_FIELDS);
    assert.equal(body.title, 'laptop');
    assert.equal(body.key, `${line.split(' ').slice(0, 2).join(' ')} Alice Example (kiln.test)`);
    assert.equal(body.usage_type, 'auth_and_signing');
    assert.equal(body.expires_at, null);
    const row = await t.db.selectFrom('keys').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, alice.id);
    assert.equal(row.key_type, 'ed25519');
    assert.equal(row.bits, 256);
    const fp = sshFingerprints(line);
    assert.equal(row.fingerprint, fp.md5);
    assert.equal(row.fingerprint_sha256, fp.sha256);
  });

  it('takes expires_at and usage_type, and RSA keys', async () => {
    const line = sshPublicKey('rsa');
    const res = await t.request({
      method: 'POST', url: '/api/v4/user/keys', token: aliceToken,
      payload: { title: 'signing', key: line, expires_at: '2999-01-02T03:04:05Z', usage_type: 'signing' },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().expires_at, '2999-01-02T03:04:05.000Z');
    assert.equal(res.json().usage_type, 'signing');
    const row = await t.db.selectFrom('keys').select(['key_type', 'bits']).where('id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { key_type: 'rsa', bits: 2048 });
  });

  it('refuses a key that is taken, by anyone', async () => {
    const line = sshPublicKey('ecdsa');
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/user/keys', token: aliceToken, payload: { title: 'a', key: line } })).statusCode, 201);
    const again = await t.request({ method: 'POST', url: '/api/v4/user/keys', token: bobToken, payload: { title: 'b', key: line.replace(/ \S+$/, ' other') } });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: { fingerprint: ['has already been taken'] } });
  });

  it('refuses invalid keys, blank or long titles, expired keys and bad parameters', async () => {
    const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v4/user/keys', token: aliceToken, payload });
    let res = await post({ title: 'x', key: 'not a key' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
    res = await post({ title: 'x', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBroken' });
    assert.deepEqual(res.json(), { message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
    // A valid blob under the wrong algorithm name.
    res = await post({ title: 'x', key: sshPublicKey('ed25519').replace('ssh-ed25519', 'ssh-rsa') });
    assert.deepEqual(res.json(), { message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
    res = await post({ title: '', key: sshPublicKey() });
    assert.deepEqual(res.json(), { message: { title: ["can't be blank"] } });
    res = await post({ title: 'x'.repeat(256), key: sshPublicKey() });
    assert.deepEqual(res.json(), { message: { title: ['is too long (maximum is 255 characters)'] } });
    res = await post({ title: 'x', key: sshPublicKey(), expires_at: '2001-01-01T00:00:00Z' });
    assert.deepEqual(res.json(), { message: { key: ['has expired'] } });
    res = await post({ title: 'x' });
    assert.deepEqual(res.json(), { message: '400 Bad request - "key" not given' });
    res = await post({ key: sshPublicKey() });
    assert.deepEqual(res.json(), { message: '400 Bad request - "title" not given' });
    res = await post({ title: 'x', key: sshPublicKey(), usage_type: 'sometimes' });
    assert.deepEqual(res.json(), { error: 'usage_type does not have a valid value' });
    res = await post({ title: 'x', key: sshPublicKey(), expires_at: 'soon' });
    assert.deepEqual(res.json(), { error: 'expires_at is invalid' });
  });

  it('lists only the caller\'s keys, paginated', async () => {
    const user = await createUser(t.db);
    const token = await createToken(t.db, user);
    for (let i = 0; i < 3; i++) {
      await t.request({ method: 'POST', url: '/api/v4/user/keys', token, payload: { title: `k${i}`, key: sshPublicKey() } });
    }
    const page1 = await t.request({ url: '/api/v4/user/keys?per_page=2', token });
    assert.equal(page1.statusCode, 200);
    assert.deepEqual(page1.json().map((k: { title: string }) => k.title), ['k0', 'k1']);
    assert.equal(page1.headers['x-total'], '3');
    assert.equal(page1.headers['x-next-page'], '2');
    assert.match(String(page1.headers.link), /<http:\/\/kiln\.test\/api\/v4\/user\/keys\?page=2&per_page=2>; rel="next"/);
    const page2 = await t.request({ url: '/api/v4/user/keys?per_page=2&page=2', token });
    assert.deepEqual(page2.json().map((k: { title: string }) => k.title), ['k2']);
  });

  it('shows one key of the caller; others\' keys, missing or non-numeric ids are 404', async () => {
    const created = (await t.request({ method: 'POST', url: '/api/v4/user/keys', token: bobToken, payload: { title: 'b1', key: sshPublicKey() } })).json();
    const own = await t.request({ url: `/api/v4/user/keys/${created.id}`, token: bobToken });
    assert.equal(own.statusCode, 200);
    assert.equal(own.json().title, 'b1');
    for (const [url, token] of [[`/api/v4/user/keys/${created.id}`, aliceToken], [`/api/v4/user/keys/${created.id}`, ROOT_TOKEN],
      ['/api/v4/user/keys/999999', bobToken], ['/api/v4/user/keys/abc', bobToken]]) {
      const res = await t.request({ url, token });
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { message: '404 Key Not Found' });
    }
  });

  it('deletes the caller\'s key with 204; another\'s key is 404; a non-integer id is 400', async () => {
    const created = (await t.request({ method: 'POST', url: '/api/v4/user/keys', token: bobToken, payload: { title: 'gone', key: sshPublicKey() } })).json();
    const other = await t.request({ method: 'DELETE', url: `/api/v4/user/keys/${created.id}`, token: aliceToken });
    assert.equal(other.statusCode, 404);
    assert.deepEqual(other.json(), { message: '404 Key Not Found' });
    const bad = await t.request({ method: 'DELETE', url: '/api/v4/user/keys/abc', token: bobToken });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'key_id is invalid' }]);
    const stale = await t.request({
      method: 'DELETE', url: `/api/v4/user/keys/${created.id}`, token: bobToken, headers: { 'if-unmodified-since': 'Sat, 01 Jan 2000 00:00:00 GMT' },
    });
    assert.deepEqual([stale.statusCode, stale.json()], [412, { message: '412 Precondition Failed' }]);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/user/keys/${created.id}`, token: bobToken });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(await t.db.selectFrom('keys').select('id').where('id', '=', created.id).executeTakeFirst(), undefined);
  });

  it('requires authentication and the right scopes', async () => {
    for (const [method, url] of [['GET', '/api/v4/user/keys'], ['GET', '/api/v4/user/keys/1'], ['POST', '/api/v4/user/keys'], ['DELETE', '/api/v4/user/keys/1']] as const) {
      const res = await t.request({ method, url });
      assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }], `${method} ${url}`);
    }
    const readUser = await createToken(t.db, alice, { scopes: ['read_user'] });
    assert.equal((await t.request({ url: '/api/v4/user/keys', token: readUser })).statusCode, 200);
    const write = await t.request({ method: 'POST', url: '/api/v4/user/keys', token: readUser, payload: { title: 'x', key: sshPublicKey() } });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json().error, 'insufficient_scope');
  });
});

describe('SSH keys of any user (/users/:id/keys)', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let other: UserRow;
  let otherToken: string;
  let adminToken: string;
  const keyIds: number[] = [];
  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { name: 'Owner Person' });
    ownerToken = await createToken(t.db, owner);
    other = await createUser(t.db);
    otherToken = await createToken(t.db, other);
    adminToken = await createToken(t.db, await createAdmin(t.db));
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ method: 'POST', url: '/api/v4/user/keys', token: ownerToken, payload: { title: `o${i}`, key: sshPublicKey() } });
      keyIds.push(res.json().id);
    }
  });
  after(async () => { await t.close(); });

  it('lists a user\'s keys by id or username without authentication, paginated', async () => {
    const byId = await t.request({ url: `/api/v4/users/${owner.id}/keys` });
    assert.equal(byId.statusCode, 200);
    assert.deepEqual(byId.json().map((k: { id: number }) => k.id), keyIds);
    assert.match(byId.json()[0].key, / Owner Person \(kiln\.test\)$/);
    const byName = await t.request({ url: `/api/v4/users/${owner.username.toUpperCase()}/keys?per_page=1&page=3`, token: otherToken });
    assert.deepEqual(byName.json().map((k: { id: number }) => k.id), [keyIds[2]]);
    assert.equal(byName.headers['x-total-pages'], '3');
    assert.equal(byName.headers['x-prev-page'], '2');
    const missing = await t.request({ url: '/api/v4/users/no-such-user/keys' });
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 User Not Found' }]);
  });

  it('shows one key of a user; wrong user, missing key or user are 404', async () => {
    const res = await t.request({ url: `/api/v4/users/${owner.id}/keys/${keyIds[1]}` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().title, 'o1');
    const wrong = await t.request({ url: `/api/v4/users/${other.id}/keys/${keyIds[1]}` });
    assert.deepEqual([wrong.statusCode, wrong.json()], [404, { message: '404 Key Not Found' }]);
    const noUser = await t.request({ url: `/api/v4/users/999999/keys/${keyIds[1]}` });
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
    // GET requires a numeric :id; the path only matches the administrators' DELETE (whose
    // :user_id has no requirement), so the Service's catch-all route answers 404.
    const named = await t.request({ url: `/api/v4/users/${owner.username}/keys/${keyIds[1]}` });
    assert.deepEqual([named.statusCode, named.json()], [404, { error: '404 Not Found' }]);
  });

  it('lets administrators add and delete keys of a user', async () => {
    const line = sshPublicKey();
    const res = await t.request({ method: 'POST', url: `/api/v4/users/${other.id}/keys`, token: adminToken, payload: { title: 'by admin', key: line } });
    assert.equal(res.statusCode, 201);
    assert.match(res.json().key, new RegExp(` ${other.name} \\(kiln\\.test\\)$`));
    const row = await t.db.selectFrom('keys').select('user_id').where('id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, other.id);
    const wrongOwner = await t.request({ method: 'DELETE', url: `/api/v4/users/${owner.id}/keys/${res.json().id}`, token: adminToken });
    assert.deepEqual([wrongOwner.statusCode, wrongOwner.json()], [404, { message: '404 Key Not Found' }]);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/users/${other.id}/keys/${res.json().id}`, token: adminToken });
    assert.equal(del.statusCode, 204);
    assert.equal(await t.db.selectFrom('keys').select('id').where('id', '=', res.json().id).executeTakeFirst(), undefined);
  });

  it('guards the administrators\' writes: 401, 400 before 403, 403, 404', async () => {
    const anon = await t.request({ method: 'POST', url: `/api/v4/users/${owner.id}/keys`, payload: { title: 'x', key: sshPublicKey() } });
    assert.equal(anon.statusCode, 401);
    // Parameter validation runs before the administrator check (reference §2.1, §6.4).
    const invalid = await t.request({ method: 'POST', url: '/api/v4/users/0/keys', token: otherToken });
    assert.deepEqual([invalid.statusCode, invalid.json()], [400, { message: '400 Bad request - "title" not given' }]);
    const notAdmin = await t.request({ method: 'POST', url: `/api/v4/users/${owner.id}/keys`, token: otherToken, payload: { title: 'x', key: sshPublicKey() } });
    assert.deepEqual([notAdmin.statusCode, notAdmin.json()], [403, { message: '403 Forbidden' }]);
    const notAdminDelete = await t.request({ method: 'DELETE', url: `/api/v4/users/${owner.id}/keys/${keyIds[0]}`, token: ownerToken });
    assert.deepEqual([notAdminDelete.statusCode, notAdminDelete.json()], [403, { message: '403 Forbidden' }]);
    const noUser = await t.request({ method: 'POST', url: '/api/v4/users/999999/keys', token: adminToken, payload: { title: 'x', key: sshPublicKey() } });
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
    const hugeId = await t.request({ method: 'DELETE', url: '/api/v4/users/99999999999/keys/1', token: adminToken });
    assert.deepEqual([hugeId.statusCode, hugeId.json()], [404, { message: '404 User Not Found' }]);
    const taken = await t.request({ method: 'POST', url: `/api/v4/users/${owner.id}/keys`, token: adminToken, payload: { title: 'x', key: 'ssh-rsa nope' } });
    assert.deepEqual([taken.statusCode, taken.json()], [400, { message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } }]);
  });
});
