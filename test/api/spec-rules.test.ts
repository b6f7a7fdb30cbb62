/**
 * Rules of the spec that cut across resources (issue 16, item 5): JSON null means "not given",
 * parameters sent as a payload on GET, bridges without failure_reason, queued_duration as the
 * Service computes it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';

describe('spec rules', () => {
  let t: TestApp;

  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('takes JSON null for an optional typed parameter as not given', async () => {
    const created = await t.request({
      method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN,
      payload: { email: 'nully@example.com', username: 'nully', name: 'Nully', password: 'a-long-password-1', private_profile: null, bio: null, projects_limit: null, admin: null },
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json();
    // private_profile: "null converted to false" (spec, POST /users); bio keeps its default.
    assert.equal(body.private_profile, false);
    assert.equal(body.bio, '');
    assert.equal(body.is_admin, false);
    const updated = await t.request({ method: 'PUT', url: `/api/v4/users/${body.id}`, token: ROOT_TOKEN, payload: { bio: 'hello', location: null, external: null } });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().bio, 'hello');
    assert.equal(updated.json().external, false);
    // A required parameter sent as null is missing.
    const missing = await t.request({ method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN, payload: { email: null, username: 'x', name: 'x', password: 'a-long-password-1' } });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: '400 Bad request - "email" not given' });
  });

  it('reads parameters sent as a JSON or form payload on GET, the payload winning over the query', async () => {
    const user = await createUser(t.db, { username: 'payload-reader' });
    const token = await createToken(t.db, user);
    const json = await t.request({ method: 'GET', url: '/api/v4/users', token, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username: 'payload-reader' }) });
    assert.equal(json.statusCode, 200);
    assert.deepEqual(json.json().map((u: { id: number }) => u.id), [user.id]);
    const form = await t.request({
      method: 'GET', url: '/api/v4/users?username=root', token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'username=payload-reader',
    });
    assert.deepEqual(form.json().map((u: { id: number }) => u.id), [user.id]);
    const invalid = await t.request({ method: 'GET', url: '/api/v4/users', token, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ per_page: 'many' }) });
    assert.equal(invalid.statusCode, 400);
    assert.deepEqual(invalid.json(), { error: 'per_page is invalid' });
    const broken = await t.request({ method: 'GET', url: '/api/v4/users', token, headers: { 'content-type': 'application/json' }, payload: '{"username":' });
    assert.equal(broken.statusCode, 400);
    // Without a body nothing changes.
    const plain = await t.request({ method: 'GET', url: '/api/v4/users?username=payload-reader', token });
    assert.deepEqual(plain.json().map((u: { id: number }) => u.id), [user.id]);
  });

  it('limits user searches by search_rate_limit (its deprecated alias user_email_lookup_limit sets it too)', async () => {
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { user_email_lookup_limit: 3 } });
    assert.equal(set.json().search_rate_limit, 3);
    const searcher = await createToken(t.db, await createUser(t.db));
    for (let i = 0; i < 3; i++) assert.equal((await t.request({ url: '/api/v4/users?search=someone', token: searcher })).statusCode, 200);
    const limited = await t.request({ url: '/api/v4/users?search=someone', token: searcher });
    assert.deepEqual([limited.statusCode, limited.json()], [429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }]);
    // Lists without a search, and other users, are not counted.
    assert.equal((await t.request({ url: '/api/v4/users', token: searcher })).statusCode, 200);
    assert.equal((await t.request({ url: '/api/v4/users?search=someone', token: await createToken(t.db, await createUser(t.db)) })).statusCode, 200);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 0 } });
    assert.equal((await t.request({ url: '/api/v4/users?search=someone', token: searcher })).statusCode, 200);
  });

  it('sends no failure_reason on bridges, and queued_duration counts to now until the job starts', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': 'build:\n  script: echo hi\nchild:\n  trigger:\n    include: child.yml\n',
      'child.yml': 'inner:\n  script: echo inner\n',
    });
    const pipeline = await createPipeline(t, p);
    await t.db.updateTable('ci_builds').set({ status: 'failed', failure_reason: 'downstream_pipeline_creation_failed' })
      .where('pipeline_id', '=', pipeline.id).where('type', '=', 'bridge').execute();
    const bridges = await t.request({ url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}/bridges`, token: p.ownerToken });
    assert.equal(bridges.statusCode, 200, bridges.body);
    assert.equal(bridges.json().length, 1);
    assert.equal(bridges.json()[0].status, 'failed');
    assert.equal('failure_reason' in bridges.json()[0], false);

    const queuedAt = new Date(Date.now() - 60_000).toISOString();
    await t.db.updateTable('ci_builds').set({ status: 'canceled', queued_at: queuedAt, started_at: null })
      .where('pipeline_id', '=', pipeline.id).where('name', '=', 'build').execute();
    const jobs = await t.request({ url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}/jobs`, token: p.ownerToken });
    const build = jobs.json().find((j: { name: string }) => j.name === 'build');
    // A job that never started was queued until now, whatever its status (CommitStatus#queued_duration).
    assert.ok(build.queued_duration >= 59 && build.queued_duration < 120, String(build.queued_duration));
  });
});
