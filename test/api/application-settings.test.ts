/**
 * GET/PUT /application/settings (administrators): the settings kiln has, validation of the
 * storage weights in the Service's model-error shape, and new repositories following the weights.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { makeShards, type Shards } from '../helpers/storage-shards.ts';

let t: TestApp;
let shards: Shards;

before(async () => {
  shards = await makeShards(['default', 'fast', 'slow']);
  t = await startTestApp({ KILN_STORAGES: shards.env });
});
after(async () => {
  await t.close();
  await shards.remove();
});

const settings = (method: 'GET' | 'PUT', payload?: object, token = ROOT_TOKEN) =>
  t.request({ method, url: '/api/v4/application/settings', token, ...(payload ? { payload } : {}) });

test('administrators only', async () => {
  assert.equal((await t.request({ method: 'GET', url: '/api/v4/application/settings' })).statusCode, 401);
  const token = await createToken(t.db, await createUser(t.db));
  const r = await settings('PUT', { repository_storages_weighted: { nope: 'x' } }, token);
  assert.deepEqual([r.statusCode, r.json()], [403, { message: '403 Forbidden' }]);
});

test('defaults: every configured shard, the default one weighted 100', async () => {
  const r = await settings('GET');
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), {
    id: 1, require_admin_approval_after_user_signup: false, repository_storages_weighted: { default: 100, fast: 0, slow: 0 },
  });
});

test('invalid weights are refused and nothing is written', async () => {
  const cases: [object, object][] = [
    [{}, { error: 'require_admin_approval_after_user_signup, repository_storages_weighted are missing, at least one parameter must be provided' }],
    [{ repository_storages_weighted: { nope: 10 } }, { message: { repository_storages_weighted: ["can't include: nope"] } }],
    [{ repository_storages_weighted: { fast: 'lots' } }, { message: { repository_storages_weighted: ["value for 'fast' must be an integer"] } }],
    [{ repository_storages_weighted: { fast: 101, slow: -1 } }, { message: { repository_storages_weighted: ["value for 'fast' must be between 0 and 100", "value for 'slow' must be an integer"] } }],
    [{ repository_storages_weighted: 'fast' }, { error: 'repository_storages_weighted is invalid' }],
    [{ require_admin_approval_after_user_signup: 'maybe' }, { error: 'require_admin_approval_after_user_signup is invalid' }],
  ];
  for (const [payload, body] of cases) {
    // A valid setting sent alongside is not written either when another value is refused.
    const r = await settings('PUT', Object.keys(payload).length === 0 || 'require_admin_approval_after_user_signup' in payload
      ? payload : { require_admin_approval_after_user_signup: true, ...payload });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), body);
  }
  assert.deepEqual((await settings('GET')).json().repository_storages_weighted, { default: 100, fast: 0, slow: 0 });
  assert.equal((await settings('GET')).json().require_admin_approval_after_user_signup, false);
});

test('weights change per shard (form or JSON), and new repositories go where they say', async () => {
  const form = await t.request({
    method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'repository_storages_weighted[default]=0&repository_storages_weighted[fast]=100',
  });
  assert.equal(form.statusCode, 200, form.body);
  assert.deepEqual(form.json().repository_storages_weighted, { default: 0, fast: 100, slow: 0 });
  for (let i = 0; i < 5; i++) {
    const p = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: `weighted-${i}` } });
    assert.equal(p.json().repository_storage, 'fast');
  }
  // Only the named shard changes; the others keep their weights.
  const json = await settings('PUT', { repository_storages_weighted: { slow: 100, fast: 0 }, require_admin_approval_after_user_signup: true });
  assert.deepEqual(json.json(), { id: 1, require_admin_approval_after_user_signup: true, repository_storages_weighted: { default: 0, fast: 0, slow: 100 } });
  const snippet = await t.request({ method: 'POST', url: '/api/v4/snippets', token: ROOT_TOKEN, payload: { title: 's', file_name: 'a', content: 'b' } });
  const row = await t.db.selectFrom('snippets').select('repository_storage').where('id', '=', snippet.json().id).executeTakeFirstOrThrow();
  assert.equal(row.repository_storage, 'slow');
  await settings('PUT', { require_admin_approval_after_user_signup: false });
});
