import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('user custom attributes', () => {
  let t: TestApp;
  let user: UserRow;
  let userToken: string;
  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    userToken = await createToken(t.db, user);
  });
  after(async () => { await t.close(); });

  const url = (key?: string) => `/api/v4/users/${user.id}/custom_attributes${key ? `/${key}` : ''}`;

  it('sets, reads, lists and deletes attributes', async () => {
    const set = await t.request({ method: 'PUT', url: url('team'), token: ROOT_TOKEN, payload: { value: 'red' } });
    assert.equal(set.statusCode, 200);
    assert.deepEqual(set.json(), { key: 'team', value: 'red' });
    const changed = await t.request({ method: 'PUT', url: url('team'), token: ROOT_TOKEN, payload: { value: 'blue' } });
    assert.deepEqual(changed.json(), { key: 'team', value: 'blue' });
    await t.request({ method: 'PUT', url: url('tier'), token: ROOT_TOKEN, payload: { value: 'gold' } });
    const one = await t.request({ url: url('team'), token: ROOT_TOKEN });
    assert.deepEqual(one.json(), { key: 'team', value: 'blue' });
    const list = await t.request({ url: url(), token: ROOT_TOKEN });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), [{ key: 'team', value: 'blue' }, { key: 'tier', value: 'gold' }]);
    assert.equal(list.headers['x-total'], '2');
    const shown = await t.request({ url: `/api/v4/users/${user.id}?with_custom_attributes=true`, token: ROOT_TOKEN });
    assert.deepEqual(shown.json().custom_attributes, [{ key: 'team', value: 'blue' }, { key: 'tier', value: 'gold' }]);
    const deleted = await t.request({ method: 'DELETE', url: url('team'), token: ROOT_TOKEN });
    assert.equal(deleted.statusCode, 204);
    const gone = await t.request({ url: url('team'), token: ROOT_TOKEN });
    assert.equal(gone.statusCode, 404);
    assert.deepEqual(gone.json(), { message: '404 Not found' });
    assert.equal((await t.request({ method: 'DELETE', url: url('team'), token: ROOT_TOKEN })).statusCode, 404);
  });

  it('paginates the list', async () => {
    for (const k of ['a', 'b', 'c']) await t.request({ method: 'PUT', url: url(`page_${k}`), token: ROOT_TOKEN, payload: { value: k } });
    const first = await t.request({ url: `${url()}?per_page=2`, token: ROOT_TOKEN });
    assert.equal(first.json().length, 2);
    assert.equal(first.headers['x-next-page'], '2');
    assert.match(String(first.headers.link), /rel="next"/);
  });

  it('is for administrators only', async () => {
    assert.deepEqual((await t.request({ url: url(), token: userToken })).json(), { message: '403 Forbidden' });
    assert.equal((await t.request({ url: url('tier'), token: userToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'PUT', url: url('x'), token: userToken, payload: { value: 'y' } })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: url('tier'), token: userToken })).statusCode, 403);
    assert.equal((await t.request({ url: url() })).statusCode, 401);
    const hidden = await t.request({ url: `/api/v4/users/${user.id}?with_custom_attributes=true`, token: userToken });
    assert.equal(hidden.json().custom_attributes, undefined);
  });

  it('answers 400 without a value and 404 for an unknown user', async () => {
    const missing = await t.request({ method: 'PUT', url: url('x'), token: ROOT_TOKEN, payload: {} });
    assert.deepEqual(missing.json(), { message: '400 Bad request - "value" not given' });
    const blank = await t.request({ method: 'PUT', url: url('x'), token: ROOT_TOKEN, payload: { value: ' ' } });
    assert.deepEqual(blank.json(), { message: { value: ["can't be blank"] } });
    const unknown = await t.request({ url: '/api/v4/users/999999/custom_attributes', token: ROOT_TOKEN });
    assert.deepEqual(unknown.json(), { message: '404 User Not Found' });
  });
});
