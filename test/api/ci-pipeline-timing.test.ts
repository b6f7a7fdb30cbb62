/**
 * A pipeline's clock as the Service keeps it (issue 35, item 3; pipeline-timing.ts): started_at
 * only once a job starts, duration and queued_duration in whole seconds (integers, as go-gitlab
 * decodes them), the duration counting only the time some job ran, coverage as a string.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const CONFIG = `
stages: [build, test]
build:
  stage: build
  script: make
  coverage: '/Coverage: (\\d+\\.\\d+)%/'
test:
  stage: test
  script: make test
  coverage: '/Coverage: (\\d+\\.\\d+)%/'
`;

const iso = (ms: number) => new Date(ms).toISOString();

describe('pipeline timing', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });

  const show = async (id: number) => {
    const res = await t.request({ url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      status: string; started_at: string | null; finished_at: string | null; duration: unknown; queued_duration: unknown; coverage: unknown;
    };
  };
  const setJob = (id: number, set: { started_at?: string; finished_at?: string }) =>
    t.db.updateTable('ci_builds').set(set).where('id', '=', id).execute();

  it('has no start, duration or queued time while no job ran, nor when canceled before any did', async () => {
    const { id } = await createPipeline(t, p);
    const pending = await show(id);
    assert.deepEqual([pending.status, pending.started_at, pending.duration, pending.queued_duration], ['pending', null, null, null]);
    const cancel = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipelines/${id}/cancel`, token: p.ownerToken });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const canceled = await show(id);
    assert.equal(canceled.status, 'canceled');
    assert.ok(canceled.finished_at);
    assert.deepEqual([canceled.started_at, canceled.duration, canceled.queued_duration, canceled.coverage], [null, null, null, null]);
  });

  it('counts whole seconds: queued until the first job starts, running only while some job ran', async () => {
    const { id } = await createPipeline(t, p);
    // Created 5.3 s before its first job is taken.
    await t.db.updateTable('ci_pipelines').set({ created_at: iso(Date.now() - 5300) }).where('id', '=', id).execute();
    const build = await runner.requestJob();
    const running = await show(id);
    assert.equal(running.status, 'running');
    assert.ok(running.started_at);
    const row = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const queued = Math.trunc((Date.parse(row.started_at!) - Date.parse(row.created_at)) / 1000);
    assert.ok(queued >= 5 && queued <= 6, String(queued));
    assert.deepEqual([running.queued_duration, running.duration], [queued, null]);
    await runner.appendTrace(build, 'Coverage: 80.0%\n');
    assert.equal((await runner.update(build, 'success')).statusCode, 200);
    const test = await runner.requestJob();
    await runner.appendTrace(test, 'Coverage: 95.25%\n');
    // build ran 10.6 s long ago; test runs its last 3.2 s; the minutes between them do not count.
    const now = Date.now();
    await setJob(build.id, { started_at: iso(now - 120_000), finished_at: iso(now - 109_400) });
    await setJob(test.id, { started_at: iso(now - 3200) });
    assert.equal((await runner.update(test, 'success')).statusCode, 200);
    const done = await show(id);
    assert.equal(done.status, 'success');
    assert.ok(Number.isInteger(done.duration), `duration ${String(done.duration)}`);
    assert.ok((done.duration as number) >= 13 && (done.duration as number) <= 14, String(done.duration));
    assert.equal(done.queued_duration, queued);
    assert.equal(done.started_at, running.started_at);
    // The mean of 80.0 and 95.25, with two decimals, as a string.
    assert.equal(done.coverage, '87.63');
    const stored = await t.db.selectFrom('ci_pipelines').select('duration').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.duration, done.duration);
  });

  it('leaves queued_duration null when the queued time comes to less than a second', async () => {
    const { id } = await createPipeline(t, p);
    const job = await runner.requestJob();
    const running = await show(id);
    assert.ok(running.started_at);
    assert.equal(running.queued_duration, null);
    await runner.update(job, 'failed', 'script_failure');
    const failed = await show(id);
    assert.equal(failed.status, 'failed');
    assert.ok(Number.isInteger(failed.duration), `duration ${String(failed.duration)}`);
    assert.equal(failed.coverage, null);
  });

  it('GraphQL reads the same clock', async () => {
    const { id } = await createPipeline(t, p);
    await t.db.updateTable('ci_pipelines').set({ created_at: iso(Date.now() - 2500) }).where('id', '=', id).execute();
    const job = await runner.requestJob();
    await runner.update(job, 'success');
    const rest = await show(id);
    const { iid } = await t.db.selectFrom('ci_pipelines').select('iid').where('id', '=', id).executeTakeFirstOrThrow();
    const res = await t.request({
      method: 'POST', url: '/api/graphql', token: p.ownerToken,
      payload: { query: `{ project(fullPath: "${p.fullPath}") { pipeline(iid: "${iid}") { duration queuedDuration startedAt } } }` },
    });
    assert.equal(res.statusCode, 200, res.body);
    const gql = res.json().data.project.pipeline;
    assert.deepEqual([gql.queuedDuration, gql.startedAt], [rest.queued_duration, rest.started_at]);
    assert.equal(gql.duration, rest.duration);
  });
});
