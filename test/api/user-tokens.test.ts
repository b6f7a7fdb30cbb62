import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';

const TOKEN_FIELDS = ['active', 'created_at', 'expires_at', 'id', 'impersonation', 'last_used_at', 'name', 'revoked', 'scopes', 'user_id'];

describe('impersonation tokens (administrators)', () => {
  let t: TestApp;
  let user: UserRow;
  let userToken: string;
  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    userToken = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const base = () => `/api/v4/users/${user.id}/impersonation_tokens`;
  const create = (payload: Record<string, unknown>, url = base()) => t.request({ method: 'POST', url, token: ROOT_TOKEN, payload });

  it('creates a token shown once, stored as a digest, that acts as the user', async () => {
    const res = await create({ name: 'support', scopes: ['api', 'read_user'], expires_at: '2999-12-31' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [...TOKEN_FIELDS, 'token'].sort());
    assert.deepEqual({ ...body, id: 0, created_at: '', token: '' }, {
      id: 0, name: 'support', revoked: false, created_at: '', scopes: ['api', 'read_user'], user_id: user.id,
      last_used_at: null, active: true, expires_at: '2999-12-31', impersonation: true, token: '',
    });
    const row = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, digest(body.token));
    assert.equal(row.impersonation, 1);
    const me = await t.request({ url: '/api/v4/user', token: body.token });
    assert.equal(me.json().id, user.id);
    const shown = await t.request({ url: `${base()}/${body.id}`, token: ROOT_TOKEN });
    assert.equal(shown.statusCode, 200);
    assert.equal(shown.json().token, undefined);
    assert.equal(shown.json().last_used_at !== null, true);
  });

  it('takes comma-separated scopes and validates scopes and names', async () => {
    const res = await create({ name: 'csv', scopes: 'read_user,read_repository' });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json().scopes, ['read_user', 'read_repository']);
    const empty = await create({ name: 'x', scopes: '' });
    assert.deepEqual([empty.statusCode, empty.json()], [400, { message: { scopes: ["can't be blank"] } }]);
    const unknown = await create({ name: 'x', scopes: ['api', 'write_everything'] });
    assert.deepEqual([unknown.statusCode, unknown.json()], [400, { message: { scopes: ['can only contain available scopes'] } }]);
    // sudo is an admin scope; this user is not an administrator.
    const sudo = await create({ name: 'x', scopes: ['sudo'] });
    assert.deepEqual(sudo.json(), { message: { scopes: ['can only contain available scopes'] } });
    const blank = await create({ name: ' ', scopes: ['api'] });
    assert.deepEqual(blank.json(), { message: { name: ["can't be blank"] } });
    const missing = await create({ scopes: ['api'] });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "name" not given' }]);
    const badDate = await create({ name: 'x', scopes: ['api'], expires_at: '2020-02-30' });
    assert.deepEqual([badDate.statusCode, badDate.json()], [400, { error: 'expires_at is invalid' }]);
  });

  it('revokes with 204: the row stays, lists as inactive, and the token gets 401 invalid_token', async () => {
    const created = (await create({ name: 'to revoke', scopes: ['api'] })).json();
    assert.equal((await t.request({ url: '/api/v4/user', token: created.token })).statusCode, 200);
    const del = await t.request({ method: 'DELETE', url: `${base()}/${created.id}`, token: ROOT_TOKEN });
    assert.equal(del.statusCode, 204);
    const row = await t.db.selectFrom('personal_access_tokens').select('revoked').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.revoked, 1);
    const refused = await t.request({ url: '/api/v4/user', token: created.token });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json(), { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
    const shown = await t.request({ url: `${base()}/${created.id}`, token: ROOT_TOKEN });
    assert.deepEqual([shown.json().revoked, shown.json().active], [true, false]);
  });

  it('lists by state (all, active, inactive), paginated; expired tokens are inactive', async () => {
    const other = await createUser(t.db);
    const url = `/api/v4/users/${other.id}/impersonation_tokens`;
    const ids: number[] = [];
    for (const [name, expires_at] of [['a', undefined], ['b', '2000-01-01'], ['c', undefined]] as const) {
      ids.push((await create({ name, scopes: ['api'], ...(expires_at ? { expires_at } : {}) }, url)).json().id);
    }
    await t.request({ method: 'DELETE', url: `${url}/${ids[2]}`, token: ROOT_TOKEN });
    // A personal access token of the same user is not an impersonation token.
    await createToken(t.db, other);
    const names = async (query: string) => (await t.request({ url: `${url}${query}`, token: ROOT_TOKEN })).json().map((x: { name: string }) => x.name);
    assert.deepEqual(await names(''), ['a', 'b', 'c']);
    assert.deepEqual(await names('?state=all'), ['a', 'b', 'c']);
    assert.deepEqual(await names('?state=active'), ['a']);
    assert.deepEqual(await names('?state=inactive'), ['b', 'c']);
    const page = await t.request({ url: `${url}?per_page=2&page=2`, token: ROOT_TOKEN });
    assert.deepEqual(page.json().map((x: { id: number }) => x.id), [ids[2]]);
    assert.equal(page.headers['x-total'], '3');
    const bad = await t.request({ url: `${url}?state=expired`, token: ROOT_TOKEN });
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'state does not have a valid value' }]);
  });

  it('is for administrators only, checked before parameters; 404s for users and tokens', async () => {
    for (const [method, url] of [['GET', base()], ['POST', base()], ['GET', `${base()}/1`], ['DELETE', `${base()}/1`], ['GET', '/api/v4/users/abc/impersonation_tokens']] as const) {
      assert.equal((await t.request({ method, url })).statusCode, 401);
      const res = await t.request({ method, url, token: userToken });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${method} ${url}`);
    }
    const noUser = await t.request({ url: '/api/v4/users/999999/impersonation_tokens', token: ROOT_TOKEN });
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
    const noToken = await t.request({ url: `${base()}/999999`, token: ROOT_TOKEN });
    assert.deepEqual([noToken.statusCode, noToken.json()], [404, { message: '404 Impersonation Token Not Found' }]);
    const pat = await t.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).where('impersonation', '=', 0).executeTakeFirstOrThrow();
    const notImpersonation = await t.request({ method: 'DELETE', url: `${base()}/${pat.id}`, token: ROOT_TOKEN });
    assert.deepEqual([notImpersonation.statusCode, notImpersonation.json()], [404, { message: '404 Impersonation Token Not Found' }]);
    const badId = await t.request({ url: '/api/v4/users/abc/impersonation_tokens', token: ROOT_TOKEN });
    assert.deepEqual([badId.statusCode, badId.json()], [400, { error: 'user_id is invalid' }]);
  });
});

describe('personal access tokens created by administrators', () => {
  let t: TestApp;
  let user: UserRow;
  let userToken: string;
  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    userToken = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const url = () => `/api/v4/users/${user.id}/personal_access_tokens`;

  it('creates a token for a user, shown once', async () => {
    const res = await t.request({ method: 'POST', url: url(), token: ROOT_TOKEN, payload: { name: 'ci', scopes: ['read_api'], expires_at: '2999-01-01' } });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['active', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'revoked', 'scopes', 'token', 'user_id']);
    assert.deepEqual([body.user_id, body.scopes, body.expires_at, body.active], [user.id, ['read_api'], '2999-01-01', true]);
    assert.match(body.token, /^[A-Za-z0-9_-]{20}$/);
    const row = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.token_digest, row.impersonation], [digest(body.token), 0]);
    const me = await t.request({ url: '/api/v4/user', token: body.token });
    assert.equal(me.json().id, user.id);
  });

  it('validates parameters and scopes', async () => {
    const missing = await t.request({ method: 'POST', url: url(), token: ROOT_TOKEN, payload: {} });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "name" not given' }]);
    const unknown = await t.request({ method: 'POST', url: url(), token: ROOT_TOKEN, payload: { name: 'x', scopes: ['everything'] } });
    assert.deepEqual([unknown.statusCode, unknown.json()], [400, { error: 'scopes does not have a valid value' }]);
    const blank = await t.request({ method: 'POST', url: url(), token: ROOT_TOKEN, payload: { name: '', scopes: '' } });
    assert.deepEqual([blank.statusCode, blank.json()], [422, { message: "Name can't be blank and Scopes can't be blank" }]);
    const sudo = await t.request({ method: 'POST', url: url(), token: ROOT_TOKEN, payload: { name: 'x', scopes: 'api,sudo' } });
    assert.deepEqual([sudo.statusCode, sudo.json()], [422, { message: 'Scopes can only contain available scopes' }]);
    const admin = await createAdmin(t.db);
    const forAdmin = await t.request({ method: 'POST', url: `/api/v4/users/${admin.id}/personal_access_tokens`, token: ROOT_TOKEN, payload: { name: 'x', scopes: 'api,sudo' } });
    assert.equal(forAdmin.statusCode, 201);
    assert.deepEqual(forAdmin.json().scopes, ['api', 'sudo']);
  });

  it('is for administrators only, checked before parameters; 404 for unknown users', async () => {
    assert.equal((await t.request({ method: 'POST', url: url(), payload: { name: 'x', scopes: ['api'] } })).statusCode, 401);
    const res = await t.request({ method: 'POST', url: url(), token: userToken, payload: {} });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    const noUser = await t.request({ method: 'POST', url: '/api/v4/users/999999/personal_access_tokens', token: ROOT_TOKEN, payload: { name: 'x', scopes: ['api'] } });
    assert.deepEqual([noUser.statusCode, noUser.json()], [404, { message: '404 User Not Found' }]);
  });
});
