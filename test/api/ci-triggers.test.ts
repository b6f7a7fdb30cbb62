/**
 * Pipeline triggers (issue 20, item 5): trigger tokens (CRUD, the token whole for its owner only,
 * stored as a digest and sealed), POST …/trigger/pipeline with a trigger token (source `trigger`,
 * as the owner, with variables and TRIGGER_PAYLOAD) and with a running job's CI_JOB_TOKEN (source
 * `pipeline`), and the Service's answers for wrong tokens.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { digest } from '../../src/domain/tokens/secret.ts';

const CONFIG = `
build:
  script: echo build
`;

describe('pipeline triggers', () => {
  let t: TestApp;
  let p: CiProject;
  let maintainerToken: string;
  let developerToken: string;
  let runner: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    for (const [level, set] of [[40, (s: string) => { maintainerToken = s; }], [30, (s: string) => { developerToken = s; }]] as const) {
      const u = await createUser(t.db);
      set(await createToken(t.db, u, { scopes: ['api'] }));
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: u.id, access_level: level } });
      assert.equal(res.statusCode, 201, res.body);
    }
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });

  const base = () => `/api/v4/projects/${p.project.id}`;

  it('creates, lists, changes and deletes trigger tokens, showing the whole token to its owner only', async () => {
    let res = await t.request({ method: 'POST', url: `${base()}/triggers`, token: p.ownerToken, payload: { description: 'deploy hook' } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.match(created.token, /^glptt-[0-9a-f]{40}$/);
    assert.equal(created.description, 'deploy hook');
    assert.equal(created.last_used, null);
    assert.equal(created.owner.id, p.owner.id);
    const row = await t.db.selectFrom('ci_triggers').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, digest(created.token));
    assert.ok(!row.encrypted_token.includes(created.token.slice(6)));

    res = await t.request({ method: 'GET', url: `${base()}/triggers`, token: p.ownerToken });
    assert.deepEqual(res.json().map((x: { token: string }) => x.token), [created.token]);
    res = await t.request({ method: 'GET', url: `${base()}/triggers/${created.id}`, token: maintainerToken });
    assert.equal(res.json().token, created.token.slice(6, 10));
    // Only the owner changes or deletes it; Developers do not even see the list.
    res = await t.request({ method: 'PUT', url: `${base()}/triggers/${created.id}`, token: maintainerToken, payload: { description: 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'GET', url: `${base()}/triggers`, token: developerToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'PUT', url: `${base()}/triggers/${created.id}`, token: p.ownerToken, payload: { description: 'renamed' } });
    assert.deepEqual([res.statusCode, res.json().description], [200, 'renamed']);
    res = await t.request({ method: 'POST', url: `${base()}/triggers`, token: p.ownerToken, payload: {} });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "description" not given' }]);
    res = await t.request({ method: 'POST', url: `${base()}/triggers`, token: p.ownerToken, payload: { description: 'x'.repeat(256) } });
    assert.deepEqual(res.json(), { message: { description: ['is too long (maximum is 255 characters)'] } });
    res = await t.request({ method: 'DELETE', url: `${base()}/triggers/${created.id}`, token: maintainerToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'DELETE', url: `${base()}/triggers/${created.id}`, token: p.ownerToken });
    assert.equal(res.statusCode, 204);
    for (const id of [created.id, 2147483648]) {
      res = await t.request({ method: 'GET', url: `${base()}/triggers/${id}`, token: p.ownerToken });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    }
  });

  it('creates a pipeline with a trigger token as its owner, source trigger, with the variables given', async () => {
    const trigger = (await t.request({ method: 'POST', url: `${base()}/triggers`, token: p.ownerToken, payload: { description: 'ci' } })).json();
    const res = await t.request({
      method: 'POST', url: `${base()}/trigger/pipeline`,
      payload: { token: trigger.token, ref: 'main', variables: { DEPLOY_TO: 'staging' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    const pipeline = res.json();
    assert.equal(pipeline.source, 'trigger');
    assert.equal(pipeline.ref, 'main');
    assert.equal(pipeline.user.id, trigger.owner.id);
    const vars = await t.request({ method: 'GET', url: `${base()}/pipelines/${pipeline.id}/variables`, token: p.ownerToken });
    assert.deepEqual(vars.json()[0], { variable_type: 'env_var', key: 'DEPLOY_TO', value: 'staging' });
    assert.equal(vars.json()[1].key, 'TRIGGER_PAYLOAD');
    assert.equal(vars.json()[1].variable_type, 'file');
    assert.ok(!vars.json()[1].value.includes(trigger.token));
    const shown = await t.request({ method: 'GET', url: `${base()}/triggers/${trigger.id}`, token: maintainerToken });
    assert.ok(shown.json().last_used);

    // The job sees the variable and knows it was triggered.
    const job = await runner.requestJob();
    const byKey = Object.fromEntries(job.variables.map((v) => [v.key, v.value]));
    assert.equal(byKey.DEPLOY_TO, 'staging');
    assert.equal(byKey.CI_PIPELINE_SOURCE, 'trigger');
    assert.equal(byKey.CI_PIPELINE_TRIGGERED, 'true');

    // With a running job's CI_JOB_TOKEN: a pipeline as the job's user, source pipeline.
    const other = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, other, { '.gitlab-ci.yml': CONFIG });
    const chained = await t.request({ method: 'POST', url: `/api/v4/projects/${other.project.id}/trigger/pipeline`, payload: { token: job.token, ref: 'main' } });
    assert.equal(chained.statusCode, 201, chained.body);
    assert.equal(chained.json().source, 'pipeline');
    assert.equal(chained.json().user.id, p.owner.id);
    await runner.update(job, 'success');
    // Once the job finished, its token no longer triggers anything.
    const late = await t.request({ method: 'POST', url: `/api/v4/projects/${other.project.id}/trigger/pipeline`, payload: { token: job.token, ref: 'main' } });
    assert.deepEqual([late.statusCode, late.json()], [401, { message: 'Job is not running' }]);
    for (const id of [pipeline.id]) await t.request({ method: 'POST', url: `${base()}/pipelines/${id}/cancel`, token: p.ownerToken });
    await t.request({ method: 'POST', url: `/api/v4/projects/${other.project.id}/pipelines/${chained.json().id}/cancel`, token: p.ownerToken });
  });

  it('answers 404 for unknown tokens and other projects, 400 for bad refs and variables', async () => {
    const trigger = (await t.request({ method: 'POST', url: `${base()}/triggers`, token: p.ownerToken, payload: { description: 'x' } })).json();
    const other = await createCiProject(t);
    const post = (projectId: number, payload: Record<string, unknown>) => t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/trigger/pipeline`, payload });
    let res = await post(p.project.id, { token: 'glptt-nope', ref: 'main' });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
    res = await post(other.project.id, { token: trigger.token, ref: 'main' });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
    res = await post(999999, { token: trigger.token, ref: 'main' });
    assert.equal(res.statusCode, 404);
    res = await post(p.project.id, { token: trigger.token, ref: 'no-such-branch' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { base: ['Reference not found'] } }]);
    res = await post(p.project.id, { token: trigger.token, ref: 'ma\u0000in' });
    assert.equal(res.statusCode, 400);
    res = await post(p.project.id, { token: trigger.token, ref: 'main', variables: { 'bad key': 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { base: ["Variables key can contain only letters, digits and '_'."] } }]);
    res = await post(p.project.id, { ref: 'main' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "token" not given' }]);
    // The ref in the path, as webhooks call it.
    res = await t.request({ method: 'POST', url: `${base()}/ref/main/trigger/pipeline?token=${trigger.token}` });
    assert.equal(res.statusCode, 201, res.body);
    await t.request({ method: 'POST', url: `${base()}/pipelines/${res.json().id}/cancel`, token: p.ownerToken });
  });
});
