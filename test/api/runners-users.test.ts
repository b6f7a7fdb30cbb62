/**
 * Runners for users (CONTRACT §4; spec deprecations): GET /runners, /runners/all, /runners/:id
 * with paused and the deprecated active, contact-status filters, the deprecated active/paused status
 * values (accepted with a Deprecation header), and PUT /runners/:id.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('runners for users', () => {
  let t: TestApp;
  let userToken: string;
  let active: TestRunner;
  let paused: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    userToken = await createToken(t.db, await createUser(t.db));
    active = await TestRunner.register(t, { description: 'active one', tags: ['linux'] });
    paused = await TestRunner.register(t, { description: 'paused one' });
    await t.db.updateTable('ci_runners').set({ active: 0 }).where('id', '=', paused.id).execute();
    await active.request(); // contacts kiln: online
  });
  after(async () => { await t.close(); });

  const get = (url: string, token = userToken) => t.request({ method: 'GET', url: `/api/v4${url}`, token });

  it('lists runners with paused and the deprecated active, by contact status', async () => {
    const res = await get('/runners/all', ROOT_TOKEN);
    assert.equal(res.statusCode, 200, res.body);
    const byId = Object.fromEntries(res.json().map((r: { id: number }) => [r.id, r]));
    assert.deepEqual(byId[active.id], {
      id: active.id, description: 'active one', ip_address: '127.0.0.1', active: true, paused: false, is_shared: true,
      runner_type: 'instance_type', name: 'test-runner', online: true, status: 'online',
    });
    assert.equal(byId[paused.id].paused, true);
    assert.equal(byId[paused.id].active, false);
    assert.equal(byId[paused.id].status, 'not_connected');
    const ids = async (query: string) => (await get(`/runners/all?${query}`, ROOT_TOKEN)).json().map((r: { id: number }) => r.id);
    assert.deepEqual(await ids('paused=true'), [paused.id]);
    assert.deepEqual(await ids('paused=false'), [active.id]);
    assert.deepEqual(await ids('status=online'), [active.id]);
    assert.deepEqual(await ids('status=not_connected'), [paused.id]);
    assert.deepEqual(await ids('status=offline'), []);
    assert.deepEqual(await ids('tag_list=linux'), [active.id]);
    assert.deepEqual(await ids('type=project_type'), []);
    // GET /runners lists the caller's own runners: instance runners belong to no user.
    assert.deepEqual((await get('/runners')).json(), []);
  });

  it('still accepts the deprecated status values active and paused, with a Deprecation header', async () => {
    const activeOnes = await get('/runners/all?status=active', ROOT_TOKEN);
    assert.equal(activeOnes.statusCode, 200);
    assert.deepEqual(activeOnes.json().map((r: { id: number }) => r.id), [active.id]);
    assert.equal(activeOnes.headers.deprecation, '@1653177600');
    const pausedOnes = await get('/runners/all?scope=paused', ROOT_TOKEN);
    assert.deepEqual(pausedOnes.json().map((r: { id: number }) => r.id), [paused.id]);
    assert.equal(pausedOnes.headers.deprecation, '@1653177600');
    assert.equal((await get('/runners/all?status=online', ROOT_TOKEN)).headers.deprecation, undefined);
    const mine = await get('/runners?status=paused');
    assert.deepEqual([mine.statusCode, mine.json(), mine.headers.deprecation], [200, [], '@1653177600']);
    const nul = await get('/runners/all?tag_list=a%00b', ROOT_TOKEN);
    assert.deepEqual([nul.statusCode, nul.json()], [400, { error: 'tag_list is invalid' }]);
    const bad = await get('/runners?status=sleeping');
    assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'status does not have a valid value' }]);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/runners' })).statusCode, 401);
  });

  it('lists every runner for administrators only', async () => {
    assert.deepEqual((await get('/runners/all')).json(), { message: '403 Forbidden' });
    const res = await get('/runners/all', ROOT_TOKEN);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((r: { id: number }) => r.id), [active.id, paused.id]);
  });

  it('shows one runner in detail; 404 Runner Not Found otherwise', async () => {
    const res = await get(`/runners/${active.id}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual([body.paused, body.active, body.tag_list, body.run_untagged, body.version, body.platform], [false, true, ['linux'], true, '15.2.0', 'linux']);
    assert.ok(body.contacted_at);
    const missing = await get('/runners/999999');
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Runner Not Found' }]);
  });

  it('updates a runner: administrators only for instance runners; paused wins over active', async () => {
    const denied = await t.request({ method: 'PUT', url: `/api/v4/runners/${active.id}`, token: userToken, payload: { paused: true } });
    assert.deepEqual([denied.statusCode, denied.json()], [403, { message: '403 Forbidden - Runner is shared' }]);
    const res = await t.request({ method: 'PUT', url: `/api/v4/runners/${active.id}`, token: ROOT_TOKEN, payload: { paused: true, tag_list: 'linux,arm', maintenance_note: 'n' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json().paused, res.json().active, res.json().tag_list, res.json().maintenance_note], [true, false, ['arm', 'linux'], 'n']);
    const old = await t.request({ method: 'PUT', url: `/api/v4/runners/${active.id}`, token: ROOT_TOKEN, payload: { active: true } });
    assert.equal(old.json().paused, false);
    const both = await t.request({ method: 'PUT', url: `/api/v4/runners/${active.id}`, token: ROOT_TOKEN, payload: { active: true, paused: true } });
    assert.deepEqual([both.statusCode, both.json()], [400, { error: 'active, paused are mutually exclusive' }]);
    const none = await t.request({ method: 'PUT', url: `/api/v4/runners/${active.id}`, token: ROOT_TOKEN, payload: {} });
    assert.equal(none.statusCode, 400);
    const untagged = await t.request({ method: 'PUT', url: `/api/v4/runners/${paused.id}`, token: ROOT_TOKEN, payload: { run_untagged: false } });
    assert.deepEqual(untagged.json(), { message: { tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] } });
  });
});
