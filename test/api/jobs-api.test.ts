/**
 * The Jobs table of the spec (issue 6): lists with scope, pagination and include_retried, one job,
 * its log, cancel, retry, erase and play, with the reference's permissions, codes and messages.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const CONFIG = `
build: {stage: build, script: x}
test: {stage: test, script: x}
deploy: {stage: deploy, script: x, when: manual}
`;

describe('jobs API', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  const tokens: Record<string, string> = {};
  const users: Record<string, UserRow> = {};

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    runner = await TestRunner.register(t);
    for (const [role, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
      users[role] = await createUser(t.db);
      tokens[role] = await createToken(t.db, users[role]);
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: users[role].id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
    tokens.stranger = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });
  beforeEach(async () => {
    await t.db.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['created', 'pending', 'running']).execute();
  });

  const get = (url: string, token = p.ownerToken) => t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}${url}`, token });
  const post = (url: string, token = p.ownerToken, payload?: object) => t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}${url}`, token, ...(payload ? { payload } : {}) });
  const jobId = async (pipelineId: number, name: string) =>
    (await t.db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipelineId).where('name', '=', name).where('retried', '=', 0).executeTakeFirstOrThrow()).id;

  it('lists jobs newest first, filtered by one scope or several, paginated', async () => {
    const { id } = await createPipeline(t, p);
    await runner.run();
    const all = await get('/jobs');
    assert.equal(all.statusCode, 200);
    const ids = all.json().map((j: { id: number }) => j.id);
    assert.deepEqual(ids, [...ids].sort((a, b) => b - a));
    const one = await get('/jobs?scope=success');
    assert.ok(one.json().length >= 1 && one.json().every((j: { status: string }) => j.status === 'success'));
    const many = await get('/jobs?scope[]=pending&scope[]=success');
    assert.ok(many.json().every((j: { status: string }) => ['pending', 'success'].includes(j.status)));
    assert.deepEqual([...new Set(many.json().map((j: { status: string }) => j.status))].sort(), ['pending', 'success']);
    const page = await get('/jobs?per_page=1&page=2');
    assert.equal(page.json().length, 1);
    assert.equal(page.json()[0].id, ids[1]);
    assert.equal(page.headers['x-page'], '2');
    assert.match(String(page.headers.link), /rel="next"/);
    for (const bad of ['scope=unknown', 'scope[]=success&scope[]=bogus', 'scope[a]=b']) {
      const res = await get(`/jobs?${bad}`);
      assert.deepEqual([res.statusCode, res.json()], [400, { error: 'scope does not have a valid value' }], bad);
    }
    const job = all.json().find((j: { name: string; pipeline: { id: number } }) => j.name === 'build' && j.pipeline.id === id);
    assert.equal(job.user.id, p.owner.id);
    assert.equal(job.user.created_at, p.owner.created_at);
    assert.equal(job.web_url, `http://kiln.test/${p.fullPath}/-/jobs/${job.id}`);
    assert.equal(job.runner.id, runner.id);
    assert.equal(job.coverage, null);
    assert.deepEqual(job.tag_list, []);
    assert.equal(job.failure_reason, undefined);
  });

  it('enforces read_build: reporters read private projects\' jobs, guests get 403, strangers 404', async () => {
    assert.equal((await get('/jobs', tokens.reporter)).statusCode, 200);
    const guest = await get('/jobs', tokens.guest);
    assert.deepEqual([guest.statusCode, guest.json()], [403, { message: '403 Forbidden' }]);
    const stranger = await get('/jobs', tokens.stranger);
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs` })).statusCode, 404);
    const missing = await get('/jobs/999999');
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
  });

  it('serves public projects\' jobs without authentication', async () => {
    const pub = await createCiProject(t, { visibility: 'public' });
    await pushFiles(t, pub, { '.gitlab-ci.yml': 'a: {script: x}\n' });
    await createPipeline(t, pub);
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${pub.project.id}/jobs` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().length, 1);
  });

  it('cancels with 201 (a finished job stays as it is), developers only', async () => {
    const { id } = await createPipeline(t, p);
    const build = await jobId(id, 'build');
    assert.equal((await post(`/jobs/${build}/cancel`, tokens.reporter)).statusCode, 403);
    const res = await post(`/jobs/${build}/cancel`, tokens.developer);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().status, 'canceled');
    assert.equal(res.json().finished_at, null);
    assert.equal(res.json().user, null);
    const again = await post(`/jobs/${build}/cancel`, tokens.developer);
    assert.deepEqual([again.statusCode, again.json().status], [201, 'canceled']);
    assert.equal((await get(`/pipelines/${id}`)).json().status, 'canceled');
  });

  it('cancels a running job; the runner is told to stop', async () => {
    const { id } = await createPipeline(t, p);
    const job = await runner.requestJob();
    assert.equal((await post(`/jobs/${job.id}/cancel`)).json().status, 'canceled');
    const told = await runner.update(job, 'success');
    assert.equal(told.statusCode, 403);
    assert.equal(told.headers['job-status'], 'canceled');
    assert.deepEqual(
      (await t.db.selectFrom('ci_builds').select(['name', 'status']).where('pipeline_id', '=', id).orderBy('id').execute()).map((j) => j.status),
      ['canceled', 'skipped', 'skipped'],
    );
  });

  it('retries a finished job as a new pending job; include_retried shows the old one', async () => {
    const { id } = await createPipeline(t, p);
    const failed = await runner.run('failed');
    assert.equal((await post(`/jobs/${await jobId(id, 'test')}/retry`)).json().message, '403 Forbidden - Job is not retryable');
    assert.equal((await post(`/jobs/${failed.id}/retry`, tokens.reporter)).statusCode, 403);
    const res = await post(`/jobs/${failed.id}/retry`, tokens.developer);
    assert.equal(res.statusCode, 201, res.body);
    const retried = res.json();
    assert.notEqual(retried.id, failed.id);
    assert.equal(retried.status, 'pending');
    assert.equal(retried.started_at, null);
    assert.equal(retried.finished_at, null);
    assert.equal(retried.duration, null);
    assert.equal(retried.name, 'build');
    const again = await post(`/jobs/${failed.id}/retry`);
    assert.deepEqual([again.statusCode, again.json()], [403, { message: '403 Forbidden - Job is not retryable' }]);
    const visible = (await get(`/pipelines/${id}/jobs`)).json().map((j: { id: number }) => j.id);
    assert.ok(visible.includes(retried.id) && !visible.includes(failed.id));
    const withRetried = (await get(`/pipelines/${id}/jobs?include_retried=true`)).json().map((j: { id: number }) => j.id);
    assert.ok(withRetried.includes(retried.id) && withRetried.includes(failed.id));
    assert.deepEqual(withRetried, [...withRetried].sort((a: number, b: number) => b - a));
    // The later stage, skipped by the failure, runs again after the retry succeeds.
    await runner.run();
    const statuses = Object.fromEntries((await get(`/pipelines/${id}/jobs`)).json().map((j: { name: string; status: string }) => [j.name, j.status]));
    assert.deepEqual(statuses, { build: 'success', test: 'pending', deploy: 'created' });
    const scoped = (await get(`/pipelines/${id}/jobs?scope=pending`)).json();
    assert.deepEqual(scoped.map((j: { name: string }) => j.name), ['test']);
    assert.deepEqual((await get('/pipelines/999999/jobs')).json(), { message: '404 Not found' });
  });

  it('erases artifacts and log: maintainers, or the developer who ran it; 403 when nothing to erase', async () => {
    const { id } = await createPipeline(t, p, 'main', tokens.developer);
    const job = await runner.requestJob();
    await runner.uploadArtifact(job, Buffer.from('zip bytes'));
    await runner.appendTrace(job, 'log line\n');
    await runner.update(job, 'failed', 'script_failure');
    const artifactDir = path.join(t.dataDir, 'ci', 'artifacts', String(p.project.id), String(job.id));
    const traceFile = path.join(t.dataDir, 'ci', 'traces', String(p.project.id), `${job.id}.log`);
    assert.ok(fs.existsSync(artifactDir) && fs.existsSync(traceFile));
    const otherDeveloper = await createUser(t.db);
    await post('/members', p.ownerToken, { user_id: otherDeveloper.id, access_level: 30 }).then((r) => assert.equal(r.statusCode, 201));
    assert.equal((await post(`/jobs/${job.id}/erase`, await createToken(t.db, otherDeveloper))).statusCode, 403);
    const res = await post(`/jobs/${job.id}/erase`, tokens.developer);
    assert.equal(res.statusCode, 201, res.body);
    const erased = res.json();
    assert.equal(erased.status, 'failed');
    assert.deepEqual(erased.artifacts, []);
    assert.equal(erased.artifacts_file, undefined);
    assert.equal(erased.download_url, null);
    assert.ok(erased.erased_at);
    assert.ok(!fs.existsSync(artifactDir) && !fs.existsSync(traceFile));
    assert.equal((await t.db.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', job.id).execute()).length, 0);
    // An erased log reads as an empty one: 200, text/plain, no bytes (reference §3.1).
    const trace = await get(`/jobs/${job.id}/trace`);
    assert.deepEqual([trace.statusCode, trace.headers['content-type'], trace.body], [200, 'text/plain; charset=utf-8', '']);
    const twice = await post(`/jobs/${job.id}/erase`, tokens.maintainer);
    assert.deepEqual([twice.statusCode, twice.json()], [403, { message: '403 Forbidden - Job is not erasable!' }]);
    const pending = await jobId(id, 'test');
    assert.equal((await post(`/jobs/${pending}/erase`, tokens.maintainer)).json().message, '403 Forbidden - Job is not erasable!');
  });

  it('plays manual jobs only, with job_variables_attributes; 400 Unplayable Job otherwise', async () => {
    const { id } = await createPipeline(t, p);
    await runner.run();
    await runner.run();
    const deploy = await jobId(id, 'deploy');
    const notManual = await post(`/jobs/${await jobId(id, 'build')}/play`);
    assert.deepEqual([notManual.statusCode, notManual.json()], [400, { message: '400 Bad request - Unplayable Job' }]);
    assert.equal((await post(`/jobs/${deploy}/play`, tokens.reporter)).statusCode, 403);
    const badKey = await post(`/jobs/${deploy}/play`, p.ownerToken, { job_variables_attributes: [{ key: 'NOT OK', value: 'x' }] });
    assert.equal(badKey.statusCode, 400);
    const res = await post(`/jobs/${deploy}/play`, tokens.developer, { job_variables_attributes: [{ key: 'TARGET', value: 'production' }] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'pending');
    assert.equal(res.json().user, null);
    const job = await runner.requestJob();
    assert.equal(job.id, deploy);
    assert.ok(job.variables.some((v) => v.key === 'TARGET' && v.value === 'production'));
    const twice = await post(`/jobs/${deploy}/play`);
    assert.equal(twice.statusCode, 400);
    await runner.update(job, 'success');
    // A manual job that already ran may be played again: a new job.
    const replay = await post(`/jobs/${deploy}/play`);
    assert.equal(replay.statusCode, 200);
    assert.notEqual(replay.json().id, deploy);
  });

  it('serves the log as text/plain, empty (200) while there is none', async () => {
    await createPipeline(t, p);
    const job = await runner.requestJob();
    const empty = await get(`/jobs/${job.id}/trace`);
    assert.deepEqual(
      [empty.statusCode, empty.headers['content-type'], empty.headers['content-disposition'], empty.body],
      [200, 'text/plain; charset=utf-8', `infile; filename="${job.id}.log"`, ''],
    );
    await runner.appendTrace(job, 'line 1\n');
    await runner.appendTrace(job, 'line 2\n');
    const trace = await get(`/jobs/${job.id}/trace`, tokens.reporter);
    assert.equal(trace.body, 'line 1\nline 2\n');
    assert.equal((await get(`/jobs/${job.id}/trace`, tokens.guest)).statusCode, 403);
    assert.equal((await get('/jobs/999999/trace')).statusCode, 404);
    await runner.update(job, 'success');
  });
});
