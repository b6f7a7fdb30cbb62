/**
 * The pipeline engine (issue 6): stage-by-stage progression, when: on_success / on_failure /
 * always / manual, allow_failure, needs (DAG), bridges with child and multi-project pipelines,
 * and the timeout sweeper.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { sweepCi } from '../../src/workers/ci-sweeper.ts';
import { ciEnvFrom } from '../../src/domain/pipelines/ci-env.ts';
import { decide } from '../../src/domain/pipelines/process-pipeline.ts';
import { transition, TRANSITIONS } from '../../src/domain/jobs/state-machine.ts';

describe('pipeline engine', () => {
  let t: TestApp;
  let runner: TestRunner;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });
  beforeEach(async () => {
    await t.db.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['created', 'pending', 'running']).execute();
  });

  async function project(config: string, files: Record<string, string> = {}): Promise<CiProject> {
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': config, ...files });
    return p;
  }
  const pipelineStatus = async (p: CiProject, id: number) =>
    (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken })).json().status as string;

  it('has one transition table and a pure transition()', () => {
    assert.equal(transition('pending', 'run'), 'running');
    assert.equal(transition('success', 'run'), null);
    assert.equal(transition('manual', 'enqueue'), 'pending');
    assert.equal(transition('running', 'cancel'), 'canceled');
    assert.equal(transition('success', 'cancel'), null);
    assert.equal(transition('skipped', 'reset'), 'created');
    assert.deepEqual(Object.keys(TRANSITIONS).sort(), ['actionize', 'cancel', 'drop', 'enqueue', 'reset', 'run', 'skip', 'succeed']);
    assert.equal(decide('on_success', 'success'), 'enqueue');
    assert.equal(decide('on_success', 'failed'), 'skip');
    assert.equal(decide('on_failure', 'failed'), 'enqueue');
    assert.equal(decide('on_failure', 'success'), 'skip');
    assert.equal(decide('always', 'failed'), 'enqueue');
    assert.equal(decide('manual', 'success'), 'actionize');
    assert.equal(decide('on_success', 'running'), null);
  });

  it('runs stage by stage: created → pending → running → success, then the next stage', async () => {
    const p = await project('a:\n  stage: build\n  script: x\nb:\n  stage: test\n  script: x\nc:\n  stage: deploy\n  script: x\n');
    const { id } = await createPipeline(t, p);
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'pending', b: 'created', c: 'created' });
    const a = await runner.requestJob();
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'running', b: 'created', c: 'created' });
    assert.equal(await pipelineStatus(p, id), 'running');
    await runner.update(a, 'success');
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'success', b: 'pending', c: 'created' });
    await runner.run();
    await runner.run();
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'success', b: 'success', c: 'success' });
    assert.equal(await pipelineStatus(p, id), 'success');
    const row = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(row.started_at && row.finished_at);
  });

  it('after a failure: on_success jobs are skipped, on_failure and always jobs run', async () => {
    const p = await project(`
build: {stage: build, script: x}
deploy: {stage: deploy, script: x}
cleanup: {stage: deploy, script: x, when: always}
notify: {stage: deploy, script: x, when: on_failure}
`);
    const { id } = await createPipeline(t, p);
    await runner.run('failed');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'failed', deploy: 'skipped', cleanup: 'pending', notify: 'pending' });
    await runner.run();
    await runner.run();
    assert.equal(await pipelineStatus(p, id), 'failed');
  });

  it('skips on_failure jobs after success; allow_failure lets later stages run and the pipeline pass', async () => {
    const p = await project(`
lint: {stage: build, script: x, allow_failure: true}
test: {stage: test, script: x}
rescue: {stage: test, script: x, when: on_failure}
`);
    const { id } = await createPipeline(t, p);
    await runner.run('failed');
    assert.deepEqual(await jobStatuses(t, p, id), { lint: 'failed', test: 'pending', rescue: 'skipped' });
    await runner.run();
    assert.equal(await pipelineStatus(p, id), 'success');
  });

  it('holds manual jobs in manual; playing one queues it; a blocking manual job blocks later stages', async () => {
    const p = await project(`
build: {stage: build, script: x}
deploy: {stage: deploy, script: x, when: manual}
gate: {stage: test, script: x, when: manual, allow_failure: false}
`);
    const { id } = await createPipeline(t, p);
    await runner.run();
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'success', gate: 'manual', deploy: 'created' });
    assert.equal(await pipelineStatus(p, id), 'manual');
    const gate = (await t.db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', id).where('name', '=', 'gate').executeTakeFirstOrThrow()).id;
    const played = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/jobs/${gate}/play`, token: p.ownerToken });
    assert.equal(played.statusCode, 200);
    assert.equal(played.json().status, 'pending');
    const job = await runner.requestJob();
    assert.ok(job.variables.some((v) => v.key === 'CI_JOB_MANUAL' && v.value === 'true'));
    assert.ok(job.variables.some((v) => v.key === 'CI_BUILD_MANUAL' && v.value === 'true'));
    await runner.update(job, 'success');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'success', gate: 'success', deploy: 'manual' });
    // deploy is manual and allowed to fail: it holds nothing up.
    assert.equal(await pipelineStatus(p, id), 'success');
  });

  it('runs jobs with needs as soon as what they need is done (DAG)', async () => {
    const p = await project(`
a: {stage: build, script: x}
slow: {stage: build, script: x}
b: {stage: test, script: x, needs: [a]}
c: {stage: test, script: x, needs: []}
d: {stage: deploy, script: x}
`);
    const { id } = await createPipeline(t, p);
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'pending', slow: 'pending', b: 'created', c: 'pending', d: 'created' });
    const a = await runner.requestJob();
    assert.equal(a.job_info.name, 'a');
    await runner.update(a, 'success');
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'success', slow: 'pending', b: 'pending', c: 'pending', d: 'created' });
  });

  it('creates a child pipeline from a local file and mirrors it with strategy: depend', async () => {
    const p = await project(`
build: {stage: build, script: x}
child:
  stage: test
  trigger:
    include: ci/child.yml
    strategy: depend
after: {stage: deploy, script: x}
`, { 'ci/child.yml': 'inner: {script: echo child}\n' });
    const { id } = await createPipeline(t, p);
    await runner.run();
    const bridges = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}/bridges`, token: p.ownerToken });
    assert.equal(bridges.statusCode, 200);
    const [bridge] = bridges.json();
    assert.equal(bridge.name, 'child');
    assert.equal(bridge.status, 'running');
    assert.equal(bridge.downstream_pipeline.status, 'pending');
    assert.equal(bridge.downstream_pipeline.ref, 'main');
    assert.equal(bridge.artifacts, undefined);
    const child = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', bridge.downstream_pipeline.id).executeTakeFirstOrThrow();
    assert.equal(child.source, 'parent_pipeline');
    assert.equal(child.upstream_bridge_id, bridge.id);
    const inner = await runner.requestJob();
    assert.equal(inner.job_info.name, 'inner');
    assert.ok(inner.variables.some((v) => v.key === 'CI_PIPELINE_TRIGGERED' && v.value === 'true'));
    await runner.update(inner, 'success');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'success', after: 'pending' });
    const mirrored = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}/bridges`, token: p.ownerToken })).json()[0];
    assert.equal(mirrored.status, 'success');
    assert.equal(mirrored.downstream_pipeline.status, 'success');
    // Bridges are not builds: the jobs endpoints do not list or show them.
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${bridge.id}`, token: p.ownerToken })).statusCode, 404);
  });

  it('fails a depend bridge whose child pipeline fails, which fails the parent', async () => {
    const p = await project('child:\n  trigger:\n    include: child.yml\n    strategy: depend\n', { 'child.yml': 'inner: {script: x}\n' });
    const { id } = await createPipeline(t, p);
    await runner.run('failed');
    const bridge = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}/bridges`, token: p.ownerToken })).json()[0];
    assert.equal(bridge.status, 'failed');
    assert.equal(bridge.downstream_pipeline.status, 'failed');
    assert.equal(await pipelineStatus(p, id), 'failed');
  });

  it('triggers a multi-project pipeline on the downstream default branch, as the user, when allowed', async () => {
    const downstream = await project('remote: {script: x}\n');
    const p = await createCiProject(t, { owner: downstream.owner });
    await pushFiles(t, p, { '.gitlab-ci.yml': `deploy:\n  trigger:\n    project: ${downstream.fullPath}\n` });
    const { id } = await createPipeline(t, p);
    const bridge = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}/bridges`, token: p.ownerToken })).json()[0];
    // Without strategy: depend the bridge succeeds once the downstream pipeline exists.
    assert.equal(bridge.status, 'success');
    assert.equal(bridge.downstream_pipeline.project_id, downstream.project.id);
    assert.equal(bridge.downstream_pipeline.ref, 'main');
    assert.equal(bridge.downstream_pipeline.web_url, `http://kiln.test/${downstream.fullPath}/-/pipelines/${bridge.downstream_pipeline.id}`);
    const row = await t.db.selectFrom('ci_pipelines').selectAll().where('id', '=', bridge.downstream_pipeline.id).executeTakeFirstOrThrow();
    assert.equal(row.source, 'pipeline');
    assert.equal(row.user_id, p.owner.id);

    // Someone else's project: not visible → downstream_bridge_project_not_found.
    const other = await createCiProject(t);
    await pushFiles(t, other, { '.gitlab-ci.yml': `deploy:\n  trigger: ${downstream.fullPath}\n` });
    const denied = await createPipeline(t, other);
    const failed = (await t.request({ method: 'GET', url: `/api/v4/projects/${other.project.id}/pipelines/${denied.id}/bridges`, token: other.ownerToken })).json()[0];
    assert.equal(failed.status, 'failed');
    // The Bridge entity carries no failure_reason (spec, Bridge job); the row keeps it.
    assert.equal('failure_reason' in failed, false);
    const failedRow = await t.db.selectFrom('ci_builds').select('failure_reason').where('id', '=', failed.id).executeTakeFirstOrThrow();
    assert.equal(failedRow.failure_reason, 'downstream_bridge_project_not_found');
    // A reporter of the downstream project may see it but not create pipelines there.
    const reporterMember = await t.request({ method: 'POST', url: `/api/v4/projects/${downstream.project.id}/members`, token: downstream.ownerToken, payload: { user_id: other.owner.id, access_level: 20 } });
    assert.equal(reporterMember.statusCode, 201, reporterMember.body);
    const again = await createPipeline(t, other);
    const insufficient = (await t.request({ method: 'GET', url: `/api/v4/projects/${other.project.id}/pipelines/${again.id}/bridges`, token: other.ownerToken })).json()[0];
    const insufficientRow = await t.db.selectFrom('ci_builds').select('failure_reason').where('id', '=', insufficient.id).executeTakeFirstOrThrow();
    assert.equal(insufficientRow.failure_reason, 'insufficient_bridge_permissions');
  });

  it('sweeps running jobs past their timeout and pending jobs stuck too long', async () => {
    const p = await project('a: {stage: build, script: x, timeout: 10 minutes}\nb: {stage: build, script: x}\nc: {stage: test, script: x, when: always}\n');
    const { id } = await createPipeline(t, p);
    const a = await runner.requestJob();
    assert.equal(a.runner_info && (a.runner_info as { timeout: number }).timeout, 600);
    const env = ciEnvFrom(t.db, t.config);
    assert.equal(await sweepCi(env, new Date()), 0);
    assert.equal(await sweepCi(env, new Date(Date.now() + 11 * 60_000)), 1);
    assert.deepEqual(await jobStatuses(t, p, id), { a: 'failed', b: 'pending', c: 'created' });
    assert.equal(await sweepCi(env, new Date(Date.now() + 25 * 3600_000)), 1);
    const jobs = await t.db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', id).orderBy('id').execute();
    assert.deepEqual(jobs.map((j) => [j.name, j.status, j.failure_reason]), [
      ['a', 'failed', 'stuck_or_timeout_failure'], ['b', 'failed', 'stuck_or_timeout_failure'], ['c', 'pending', null],
    ]);
    // The runner that held the job learns it is over.
    const late = await runner.update(a, 'success');
    assert.equal(late.statusCode, 403);
  });

  it('never hands one pending job to two runners asking at once', async () => {
    const p = await project('only: {script: x}\n');
    await createPipeline(t, p);
    const others = await Promise.all([1, 2, 3, 4].map(() => TestRunner.register(t)));
    const got = await Promise.all(others.map((r) => r.request()));
    assert.equal(got.filter(Boolean).length, 1);
  });

  it('lets an outsider create nothing through a private downstream', async () => {
    const stranger = await createUser(t.db);
    const token = await createToken(t.db, stranger);
    const p = await project('a: {script: x}\n');
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines`, token });
    assert.equal(res.statusCode, 404);
  });
});
