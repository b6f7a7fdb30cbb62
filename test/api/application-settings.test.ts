/**
 * GET/PUT /application/settings (administrators): every setting of the Service 15.2 with its
 * default, each type validated as Grape and the model validate it (Grape's `x is invalid`, the
 * model's `{"message": {...}}`), legacy names, `given … requires`, nothing written unless every
 * value is valid, the storage weights in the Service's model-error shape, and new repositories
 * following the weights.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPeerApp, startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { makeShards, type Shards } from '../helpers/storage-shards.ts';
import { CATALOGUE, SETTING_NAMES } from '../../src/domain/settings/catalogue.ts';
import type { SettingDecl } from '../../src/domain/settings/declarations.ts';
import { PARAMETER_NAMES } from '../../src/http/routes/admin/settings-input.ts';

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

test('defaults: every setting of the catalogue, every configured shard with the default one weighted 100', async () => {
  const r = await settings('GET');
  assert.equal(r.statusCode, 200);
  const body = r.json();
  assert.equal(body.id, 1);
  assert.deepEqual(body.repository_storages_weighted, { default: 100, fast: 0, slow: 0 });
  assert.deepEqual(body.repository_storages, ['default']);
  for (const [name, value] of Object.entries({
    require_admin_approval_after_user_signup: false, search_rate_limit: 30, search_rate_limit_unauthenticated: 10, user_email_lookup_limit: 30,
    signup_enabled: true, default_projects_limit: 100_000, default_branch_name: null, default_project_visibility: 'private',
    default_group_visibility: 'private', restricted_visibility_levels: [], throttle_authenticated_api_enabled: false,
    throttle_authenticated_api_requests_per_period: 7200, throttle_authenticated_api_period_in_seconds: 3600,
    throttle_unauthenticated_web_enabled: false, signin_enabled: true, password_authentication_enabled_for_web: true,
    polling_interval_multiplier: 1, external_authorization_service_timeout: 0.5, housekeeping_bitmaps_enabled: true,
    commit_email_hostname: 'users.noreply.kiln.test', performance_bar_allowed_group_id: null, personal_access_token_prefix: 'glpat-',
  })) assert.deepEqual(body[name], value, name);
  for (const name of SETTING_NAMES) {
    const secret = (CATALOGUE[name] as SettingDecl).secret || name === 'performance_bar_allowed_group_path';
    assert.equal(name in body, !secret, name);
  }
});

test('invalid weights are refused and nothing is written', async () => {
  const cases: [object, object][] = [
    [{}, { error: `${PARAMETER_NAMES.join(', ')} are missing, at least one parameter must be provided` }],
    [{ search_rate_limit: 'many' }, { error: 'search_rate_limit is invalid' }],
    [{ search_rate_limit: -1 }, { message: { search_rate_limit: ['must be greater than or equal to 0'] } }],
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

test('every type is taken, stored as JSON and answered back', async () => {
  const payload = {
    signup_enabled: false, default_projects_limit: 42, polling_interval_multiplier: 1.5, home_page_url: 'https://example.com/home',
    abuse_notification_email: 'abuse@example.com', import_sources: 'github,git', domain_allowlist: ['a.example', 'b.example'],
    default_project_visibility: 'internal', restricted_visibility_levels: ['public', '10'], external_pipeline_validation_service_timeout: 3,
    container_registry_import_created_before: '2026-12-26T10:00:00+02:00', rsa_key_restriction: 2048, enabled_git_access_protocol: 'nil',
    sidekiq_job_limiter_mode: 'track', first_day_of_week: 1, after_sign_up_text: 'Welcome', default_branch_name: 'trunk',
    personal_access_token_prefix: 'kiln-',
  };
  const r = await settings('PUT', payload);
  assert.equal(r.statusCode, 200, r.body);
  const body = r.json();
  for (const [name, value] of Object.entries({
    ...payload, import_sources: ['github', 'git'], restricted_visibility_levels: ['public', 'internal'],
    container_registry_import_created_before: '2026-12-26T08:00:00.000Z', enabled_git_access_protocol: null,
  })) assert.deepEqual(body[name], value, name);
  const row = await t.db.selectFrom('application_settings').select('value').where('name', '=', 'restricted_visibility_levels').executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(row.value), ['public', 'internal']);
  assert.deepEqual((await settings('GET')).json().default_projects_limit, 42);
  // A form body, as python-gitlab's CLI and curl send it; an empty list clears.
  const form = await t.request({
    method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'signup_enabled=true&restricted_visibility_levels=&external_pipeline_validation_service_timeout=',
  });
  assert.equal(form.statusCode, 200, form.body);
  assert.deepEqual([form.json().signup_enabled, form.json().restricted_visibility_levels, form.json().external_pipeline_validation_service_timeout], [true, [], null]);
});

test('Grape refuses wrong types and values, the model refuses values out of bounds, and nothing is written', async () => {
  const cases: [object, number, object][] = [
    [{ default_projects_limit: 'lots' }, 400, { error: 'default_projects_limit is invalid' }],
    [{ signup_enabled: 'maybe' }, 400, { error: 'signup_enabled is invalid' }],
    [{ signup_enabled: '' }, 400, { error: 'signup_enabled is invalid' }],
    [{ default_project_visibility: 'secret' }, 400, { error: 'default_project_visibility does not have a valid value' }],
    [{ rsa_key_restriction: 1000 }, 400, { error: 'rsa_key_restriction does not have a valid value' }],
    [{ import_sources: 'github,svn' }, 400, { error: 'import_sources does not have a valid value' }],
    [{ default_projects_limit: -1 }, 400, { message: { default_projects_limit: ['must be greater than or equal to 0'] } }],
    [{ max_attachment_size: 0 }, 400, { message: { max_attachment_size: ['must be greater than 0'] } }],
    [{ diff_max_files: 4000 }, 400, { message: { diff_max_files: ['must be less than or equal to 3000'] } }],
    [{ throttle_authenticated_api_period_in_seconds: 0 }, 400, { message: { throttle_authenticated_api_period_in_seconds: ['must be greater than 0'] } }],
    [{ home_page_url: 'not a url' }, 400, { message: { home_page_url: ['must be a valid URL'] } }],
    [{ abuse_notification_email: 'nobody' }, 400, { message: { abuse_notification_email: ['is invalid'] } }],
    [{ restricted_visibility_levels: ['public', 'secret'] }, 400, { message: { restricted_visibility_levels: ["'secret' is not a valid visibility level"] } }],
    [{ default_branch_name: 'bad..name' }, 400, { message: { default_branch_name: ['is invalid'] } }],
    [{ personal_access_token_prefix: 'no spaces' }, 400, { message: { personal_access_token_prefix: ["can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'"] } }],
    [{ plantuml_enabled: true }, 400, { message: '400 Bad request - "plantuml_url" not given' }],
    [{ signin_enabled: true, password_authentication_enabled_for_web: true }, 400, { error: 'password_authentication_enabled_for_web, signin_enabled are mutually exclusive' }],
    [{ sign_in_text: 'x'.repeat(65_536) }, 400, { message: { sign_in_text: ['is too long (maximum is 65535 characters)'] } }],
  ];
  for (const [payload, status, body] of cases) {
    const r = await settings('PUT', { gravatar_enabled: false, ...payload });
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload).slice(0, 80));
  }
  assert.equal((await settings('GET')).json().gravatar_enabled, true);
});

test('legacy names set the current settings and are answered beside them', async () => {
  const r = await settings('PUT', {
    signin_enabled: false, admin_notification_email: 'old@example.com', asset_proxy_whitelist: 'a.example,b.example',
    allow_local_requests_from_hooks_and_services: true, throttle_unauthenticated_web_enabled: true,
    throttle_unauthenticated_web_requests_per_period: 100, throttle_unauthenticated_web_period_in_seconds: 60,
  });
  assert.equal(r.statusCode, 200, r.body);
  const body = r.json();
  for (const [name, value] of Object.entries({
    password_authentication_enabled_for_web: false, password_authentication_enabled: false, signin_enabled: false,
    abuse_notification_email: 'old@example.com', asset_proxy_allowlist: ['a.example', 'b.example'], asset_proxy_whitelist: ['a.example', 'b.example'],
    allow_local_requests_from_web_hooks_and_services: true, allow_local_requests_from_hooks_and_services: true,
    throttle_unauthenticated_enabled: true, throttle_unauthenticated_requests_per_period: 100, throttle_unauthenticated_period_in_seconds: 60,
    throttle_unauthenticated_web_enabled: true,
  })) assert.deepEqual(body[name], value, name);
  // The group of the performance bar is named by its path and answered by its id.
  const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'perf', path: 'perf' } });
  const bar = await settings('PUT', { performance_bar_allowed_group_id: 'perf', password_authentication_enabled_for_web: true });
  assert.equal(bar.json().performance_bar_allowed_group_id, group.json().id);
  assert.equal((await settings('PUT', { performance_bar_enabled: false })).json().performance_bar_allowed_group_id, null);
  // The deprecated list of shards weighs each listed one 100 and the others 0.
  assert.deepEqual((await settings('PUT', { repository_storages: ['fast'] })).json().repository_storages_weighted, { default: 0, fast: 100, slow: 0 });
  await settings('PUT', { repository_storages_weighted: { default: 100, fast: 0 } });
});

test('another process of the instance sees a change at once through Redis, and within 5 s without it', async () => {
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const a = await startTestApp({ KILN_REDIS_URL: redisUrl });
  const b = await startPeerApp(a);
  const lone = await startPeerApp(t);
  try {
    const get = (app: TestApp) => app.request({ method: 'GET', url: '/api/v4/application/settings', token: ROOT_TOKEN });
    assert.equal((await get(b)).json().sign_in_text, null);
    await a.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { sign_in_text: 'Hello from a' } });
    // The message travels asynchronously: allow it a moment, far below the snapshot's 5 s.
    const heard = Date.now() + 1_000;
    let seen: string | null = null;
    while (Date.now() < heard && seen === null) {
      seen = (await get(b)).json().sign_in_text;
      if (seen === null) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(seen, 'Hello from a');

    assert.equal((await get(lone)).json().sign_in_text, null);
    await settings('PUT', { sign_in_text: 'Hello from t' });
    const deadline = Date.now() + 6_000;
    let later: string | null = null;
    while (Date.now() < deadline && later === null) {
      later = (await get(lone)).json().sign_in_text;
      if (later === null) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(later, 'Hello from t');
  } finally {
    await lone.close();
    await b.close();
    await a.close();
  }
});
