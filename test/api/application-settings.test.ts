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
    search_rate_limit: 30, search_rate_limit_unauthenticated: 10, user_email_lookup_limit: 30,
  });
});

test('invalid weights are refused and nothing is written', async () => {
  const cases: [object, object][] = [
    [{}, { error: 'require_admin_approval_after_user_signup, repository_storages_weighted, search_rate_limit, search_rate_limit_unauthenticated, user_email_lookup_limit are missing, at least one parameter must be provided' }],
    [{ search_rate_limit: 'many' }, { error: 'search_rate_limit is invalid' }],
    [{ search_rate_limit: -1 }, { error: 'search_rate_limit is invalid' }],
    [{ user_email_lookup_limit: 2 ** 31 }, { error: 'user_email_lookup_limit is invalid' }],
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
  assert.deepEqual(json.json().repository_storages_weighted, { default: 0, fast: 0, slow: 100 });
  assert.equal(json.json().require_admin_approval_after_user_signup, true);
  const snippet = await t.request({ method: 'POST', url: '/api/v4/snippets', token: ROOT_TOKEN, payload: { title: 's', file_name: 'a', content: 'b' } });
  const row = await t.db.selectFrom('snippets').select('repository_storage').where('id', '=', snippet.json().id).executeTakeFirstOrThrow();
  assert.equal(row.repository_storage, 'slow');
  await settings('PUT', { require_admin_approval_after_user_signup: false });
});

test('search_rate_limit and its deprecated alias user_email_lookup_limit', async () => {
  const set = await settings('PUT', { search_rate_limit: 50, search_rate_limit_unauthenticated: 5 });
  assert.equal(set.statusCode, 200);
  assert.deepEqual([set.json().search_rate_limit, set.json().search_rate_limit_unauthenticated, set.json().user_email_lookup_limit], [50, 5, 50]);
  const alias = await settings('PUT', { user_email_lookup_limit: 70 });
  assert.deepEqual([alias.json().search_rate_limit, alias.json().user_email_lookup_limit], [70, 70]);
  // Sent together, the current name wins.
  const both = await settings('PUT', { user_email_lookup_limit: 1, search_rate_limit: 40 });
  assert.equal(both.json().search_rate_limit, 40);
  // JSON null is "not given": nothing changes.
  const nulled = await settings('PUT', { search_rate_limit: null, search_rate_limit_unauthenticated: 6 });
  assert.equal(nulled.statusCode, 200);
  assert.deepEqual([nulled.json().search_rate_limit, nulled.json().search_rate_limit_unauthenticated], [40, 6]);
});
