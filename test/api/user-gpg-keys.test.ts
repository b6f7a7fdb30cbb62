import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { gpgPublicKey } from '../helpers/keys.ts';

const FORMAT_ERROR = "is invalid. A valid public GPG key begins with '-----BEGIN PGP PUBLIC KEY BLOCK-----' and ends with '-----END PGP PUBLIC KEY BLOCK-----'";

describe('GPG keys', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;
  let adminToken: string;
  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
    adminToken = await createToken(t.db, await createAdmin(t.db));
  });
  after(async () => { await t.close(); });

  const add = (token: string, key: string, url = '/api/v4/user/gpg_keys') => t.request({ method: 'POST', url, token, payload: { key } });

  it('adds a key for the current user, reading its fingerprint, key id, emails and subkeys', async () => {
    const key = await gpgPublicKey(['Alice@Example.com', 'alice@work.example']);
    const res = await add(aliceToken, `\n${key.armored}\n`);
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'id', 'key']);
    assert.equal(body.key, key.armored.trim());
    const row = await t.db.selectFrom('gpg_keys').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, alice.id);
    assert.equal(row.fingerprint, key.fingerprint);
    assert.equal(row.primary_keyid, key.keyId);
    assert.equal(row.emails, 'alice@example.com alice@work.example');
    const subkeys = await t.db.selectFrom('gpg_key_subkeys').select('keyid').where('gpg_key_id', '=', body.id).execute();
    assert.equal(subkeys.length, 1);
    assert.match(subkeys[0].keyid, /^[0-9A-F]{16}$/);
    const list = await t.request({ url: '/api/v4/user/gpg_keys', token: aliceToken });
    assert.deepEqual(list.json(), [body]);
    const one = await t.request({ url: `/api/v4/user/gpg_keys/${body.id}`, token: aliceToken });
    assert.deepEqual(one.json(), body);
  });

  it('refuses malformed, unreadable and taken keys with the message object', async () => {
    const blank = await add(bobToken, '');
    assert.deepEqual([blank.statusCode, blank.json()], [400, { message: { key: ["can't be blank", FORMAT_ERROR] } }]);
    const garbage = await add(bobToken, 'not a key');
    assert.deepEqual(garbage.json(), { message: { key: [FORMAT_ERROR] } });
    const unreadable = await add(bobToken, '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n-----END PGP PUBLIC KEY BLOCK-----');
    assert.deepEqual(unreadable.json(), { message: { fingerprint: ["can't be blank"], primary_keyid: ["can't be blank"] } });
    const key = await gpgPublicKey();
    assert.equal((await add(aliceToken, key.armored)).statusCode, 201);
    const same = await add(bobToken, key.armored);
    assert.deepEqual([same.statusCode, same.json()], [400, { message: { key: ['has already been taken'] } }]);
    // The same key armored differently (an armor header line) is still the same key.
    const rearmored = key.armored.replace('-----BEGIN PGP PUBLIC KEY BLOCK-----\n', '-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: again\n');
    const again = await add(bobToken, rearmored);
    assert.deepEqual(again.json(), { message: { fingerprint: ['has already been taken'], primary_keyid: ['has already been taken'] } });
    const missing = await t.request({ method: 'POST', url: '/api/v4/user/gpg_keys', token: bobToken, payload: {} });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "key" not given' }]);
  });

  it('reads a user\'s keys without authentication, paginated; 404s for users and keys', async () => {
    const user = await createUser(t.db);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await add(adminToken, (await gpgPublicKey()).armored, `/api/v4/users/${user.id}/gpg_keys`)).json().id);
    const page = await t.request({ url: `/api/v4/users/${user.id}/gpg_keys?per_page=2` });
    assert.equal(page.statusCode, 200);
    assert.deepEqual(page.json().map((k: { id: number }) => k.id), ids.slice(0, 2));
    assert.equal(page.headers['x-total'], '3');
    assert.match(String(page.headers.link), new RegExp(`/api/v4/users/${user.id}/gpg_keys\\?page=2&per_page=2>; rel="next"`));
    const one = await t.request({ url: `/api/v4/users/${user.id}/gpg_keys/${ids[2]}` });
    assert.equal(one.json().id, ids[2]);
    const wrong = await t.request({ url: `/api/v4/users/${bob.id}/gpg_keys/${ids[2]}` });
    assert.deepEqual([wrong.statusCode, wrong.json()], [404, { message: '404 GPG Key Not Found' }]);
    const noUser = await t.request({ url: '/api/v4/users/999999/gpg_keys' });
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
    const named = await t.request({ url: `/api/v4/users/${user.username}/gpg_keys` });
    assert.deepEqual([named.statusCode, named.json()], [404, { error: '404 Not Found' }]);
  });

  it('deletes (204) and revokes (202) the caller\'s own keys only', async () => {
    const first = (await add(bobToken, (await gpgPublicKey()).armored)).json();
    const second = (await add(bobToken, (await gpgPublicKey()).armored)).json();
    for (const [method, url] of [['DELETE', `/api/v4/user/gpg_keys/${first.id}`], ['POST', `/api/v4/user/gpg_keys/${first.id}/revoke`], ['GET', `/api/v4/user/gpg_keys/${first.id}`]] as const) {
      const res = await t.request({ method, url, token: aliceToken });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 GPG Key Not Found' }], `${method} ${url}`);
    }
    const bad = await t.request({ method: 'DELETE', url: '/api/v4/user/gpg_keys/abc', token: bobToken });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'key_id is invalid' }]);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/user/gpg_keys/${first.id}`, token: bobToken });
    assert.equal(del.statusCode, 204);
    const revoke = await t.request({ method: 'POST', url: `/api/v4/user/gpg_keys/${second.id}/revoke`, token: bobToken });
    assert.equal(revoke.statusCode, 202);
    const remaining = await t.db.selectFrom('gpg_keys').select('id').where('id', 'in', [first.id, second.id]).execute();
    assert.deepEqual(remaining, []);
    assert.deepEqual(await t.db.selectFrom('gpg_key_subkeys').select('id').where('gpg_key_id', 'in', [first.id, second.id]).execute(), []);
  });

  it('lets administrators add, revoke and delete a user\'s keys, and no one else', async () => {
    const url = `/api/v4/users/${bob.id}/gpg_keys`;
    const created = await add(adminToken, (await gpgPublicKey()).armored, url);
    assert.equal(created.statusCode, 201);
    const other = (await add(ROOT_TOKEN, (await gpgPublicKey()).armored, url)).json();
    assert.equal(
      (await t.db.selectFrom('gpg_keys').select('user_id').where('id', '=', created.json().id).executeTakeFirstOrThrow()).user_id, bob.id,
    );
    const writes = [['POST', url], ['POST', `${url}/${other.id}/revoke`], ['DELETE', `${url}/${other.id}`]] as const;
    for (const [method, path] of writes) {
      assert.equal((await t.request({ method, url: path, payload: { key: 'x' } })).statusCode, 401);
      const res = await t.request({ method, url: path, token: bobToken, payload: { key: 'x' } });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${method} ${path}`);
    }
    const wrongUser = await t.request({ method: 'POST', url: `/api/v4/users/${alice.id}/gpg_keys/${other.id}/revoke`, token: adminToken });
    assert.deepEqual([wrongUser.statusCode, wrongUser.json()], [404, { message: '404 GPG Key Not Found' }]);
    assert.equal((await t.request({ method: 'POST', url: `${url}/${other.id}/revoke`, token: adminToken })).statusCode, 202);
    assert.equal((await t.request({ method: 'DELETE', url: `${url}/${created.json().id}`, token: adminToken })).statusCode, 204);
    const noUser = await add(adminToken, (await gpgPublicKey()).armored, '/api/v4/users/999999/gpg_keys');
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
    assert.equal((await t.request({ url: '/api/v4/user/gpg_keys' })).statusCode, 401);
  });
});
