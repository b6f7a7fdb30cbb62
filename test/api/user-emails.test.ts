import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';

describe('secondary emails', () => {
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

  const add = (token: string, email: string, url = '/api/v4/user/emails', extra: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url, token, payload: { email, ...extra } });

  it('adds an unconfirmed email for the current user and lists it without the primary email', async () => {
    const res = await add(aliceToken, 'alice.second@example.org');
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['confirmed_at', 'email', 'id']);
    assert.equal(body.email, 'alice.second@example.org');
    assert.equal(body.confirmed_at, null);
    const row = await t.db.selectFrom('emails').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, alice.id);
    const list = await t.request({ url: '/api/v4/user/emails', token: aliceToken });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), [body]);
    const one = await t.request({ url: `/api/v4/user/emails/${body.id}`, token: aliceToken });
    assert.deepEqual(one.json(), body);
  });

  it('refuses taken emails without regard to case, primary or secondary, and invalid ones', async () => {
    for (const email of [alice.email.toUpperCase(), 'ALICE.SECOND@example.org']) {
      const res = await add(bobToken, email);
      assert.deepEqual([res.statusCode, res.json()], [400, { message: { email: ['has already been taken'] } }], email);
    }
    for (const email of ['not-an-email', 'two@@example.org', 'spaced out@example.org']) {
      const res = await add(bobToken, email);
      assert.deepEqual([res.statusCode, res.json()], [400, { message: { email: ['is invalid'] } }], email);
    }
    const blank = await add(bobToken, '');
    assert.deepEqual(blank.json(), { message: { email: ["can't be blank", 'is invalid'] } });
    const missing = await t.request({ method: 'POST', url: '/api/v4/user/emails', token: bobToken, payload: {} });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "email" not given' }]);
  });

  it('shows and deletes only the caller\'s emails: 404 Email Not Found, 400 for a non-integer id', async () => {
    const created = (await add(bobToken, 'bob.two@example.org')).json();
    for (const [method, url] of [['GET', `/api/v4/user/emails/${created.id}`], ['DELETE', `/api/v4/user/emails/${created.id}`], ['GET', '/api/v4/user/emails/999999']] as const) {
      const res = await t.request({ method, url, token: aliceToken });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Email Not Found' }], `${method} ${url}`);
    }
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.request({ method, url: '/api/v4/user/emails/ASDF', token: bobToken });
      assert.deepEqual([res.statusCode, res.json()], [400, { error: 'email_id is invalid' }]);
    }
    const del = await t.request({ method: 'DELETE', url: `/api/v4/user/emails/${created.id}`, token: bobToken });
    assert.equal(del.statusCode, 204);
    assert.equal(await t.db.selectFrom('emails').select('id').where('id', '=', created.id).executeTakeFirst(), undefined);
    // Deleted, the address is free again.
    assert.equal((await add(aliceToken, 'bob.two@example.org')).statusCode, 201);
  });

  it('paginates the current user\'s emails', async () => {
    const user = await createUser(t.db);
    const token = await createToken(t.db, user);
    for (const n of [1, 2, 3]) await add(token, `paged${n}@example.net`);
    const page = await t.request({ url: '/api/v4/user/emails?per_page=2&page=2', token });
    assert.deepEqual(page.json().map((e: { email: string }) => e.email), ['paged3@example.net']);
    assert.equal(page.headers['x-total'], '3');
    assert.equal(page.headers['x-page'], '2');
  });

  it('lets administrators list, add (optionally confirmed) and delete a user\'s emails', async () => {
    const user = await createUser(t.db);
    const plain = await add(adminToken, 'admin.added@example.org', `/api/v4/users/${user.id}/emails`);
    assert.equal(plain.statusCode, 201);
    assert.equal(plain.json().confirmed_at, null);
    const confirmed = await add(adminToken, 'confirmed@example.org', `/api/v4/users/${user.id}/emails`, { skip_confirmation: true });
    assert.equal(confirmed.statusCode, 201);
    assert.match(confirmed.json().confirmed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const list = await t.request({ url: `/api/v4/users/${user.id}/emails?per_page=1`, token: adminToken });
    assert.deepEqual(list.json().map((e: { email: string }) => e.email), ['admin.added@example.org']);
    assert.equal(list.headers['x-total'], '2');
    assert.match(String(list.headers.link), /rel="next"/);
    const taken = await add(adminToken, 'CONFIRMED@example.org', `/api/v4/users/${alice.id}/emails`);
    assert.deepEqual([taken.statusCode, taken.json()], [400, { message: { email: ['has already been taken'] } }]);
    const wrongUser = await t.request({ method: 'DELETE', url: `/api/v4/users/${alice.id}/emails/${plain.json().id}`, token: adminToken });
    assert.deepEqual([wrongUser.statusCode, wrongUser.json()], [404, { message: '404 Email Not Found' }]);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/users/${user.id}/emails/${plain.json().id}`, token: adminToken });
    assert.equal(del.statusCode, 204);
    assert.equal((await t.request({ url: `/api/v4/users/${user.id}/emails`, token: adminToken })).json().length, 1);
  });

  it('guards the administrators\' routes', async () => {
    const url = `/api/v4/users/${bob.id}/emails`;
    assert.deepEqual((await t.request({ url })).json(), { message: '401 Unauthorized' });
    assert.equal((await t.request({ method: 'POST', url, payload: { email: 'x@example.org' } })).statusCode, 401);
    for (const [method, path] of [['GET', url], ['POST', url], ['DELETE', `${url}/1`]] as const) {
      const res = await t.request({ method, url: path, token: aliceToken, payload: method === 'POST' ? { email: 'x@example.org' } : undefined });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${method} ${path}`);
    }
    const badParams = await t.request({ method: 'POST', url, token: aliceToken, payload: { email: 'x@example.org', skip_confirmation: 'maybe' } });
    assert.deepEqual([badParams.statusCode, badParams.json()], [400, { error: 'skip_confirmation is invalid' }]);
    for (const method of ['GET', 'POST'] as const) {
      const res = await t.request({ method, url: '/api/v4/users/999999/emails', token: adminToken, payload: method === 'POST' ? { email: 'x@example.org' } : undefined });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);
    }
    const named = await t.request({ url: '/api/v4/users/ASDF/emails', token: adminToken });
    assert.deepEqual([named.statusCode, named.json()], [404, { error: '404 Not Found' }]);
    assert.equal((await t.request({ url: '/api/v4/user/emails' })).statusCode, 401);
  });
});
