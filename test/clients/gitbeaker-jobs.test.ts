/**
 * CI driven by @gitbeaker/rest, unchanged, against a listening kiln: Pipelines create/all/show,
 * Jobs all (scope, pipeline, include_retried), allPipelineBridges, show, showLog, cancel, retry,
 * erase, play, and showConnectedJob / showConnectedJobK8Agents with a job token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab, Jobs } from '@gitbeaker/rest';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

type RequestError = Error & { cause?: { description?: string; response?: Response } };

const CONFIG = `
build: {stage: build, script: make}
test: {stage: test, script: make test}
deploy: {stage: deploy, script: make deploy, when: manual}
child:
  stage: deploy
  trigger:
    include: child.yml
`;

describe('@gitbeaker/rest: Jobs and Pipelines', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let api: InstanceType<typeof Gitlab>;
  let runner: TestRunner;
  let pipelineId: number;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'child.yml': 'inner: {script: x}\n' });
    api = new Gitlab({ host: t.url, token: p.ownerToken });
    runner = await TestRunner.register(t);
  });
  after(async () => { await t.close(); });

  it('creates, lists and shows pipelines', async () => {
    const created = await api.Pipelines.create(p.project.id, 'main');
    pipelineId = created.id;
    assert.equal(created.ref, 'main');
    assert.equal(created.status, 'pending');
    const all = await api.Pipelines.all(p.project.id);
    assert.deepEqual(all.map((x) => x.id), [pipelineId]);
    const shown = await api.Pipelines.show(p.project.id, pipelineId);
    assert.equal(shown.sha, created.sha);
    await assert.rejects(api.Pipelines.create(p.project.id, 'nope'), (err: RequestError) => {
      assert.equal(err.cause?.response?.status, 400);
      return true;
    });
  });

  it('lists jobs by scope and pipeline, shows one, reads the log', async () => {
    const job = await runner.requestJob();
    await runner.appendTrace(job, 'compiling\n');
    await runner.update(job, 'success');
    const jobs = await api.Jobs.all(p.project.id, { pipelineId });
    assert.deepEqual(jobs.map((j) => j.name), ['deploy', 'test', 'build']);
    const success = await api.Jobs.all(p.project.id, { scope: 'success' });
    assert.deepEqual(success.map((j) => j.id), [job.id]);
    const shown = await api.Jobs.show(p.project.id, job.id);
    assert.equal(shown.status, 'success');
    assert.equal((shown.commit as { id: string }).id.length, 40);
    assert.equal(await api.Jobs.showLog(p.project.id, job.id), 'compiling\n');
  });

  it('reads the job behind a job token', async () => {
    const job = await runner.requestJob();
    const asJob = new Jobs({ host: t.url, jobToken: job.token });
    // gitbeaker 43 sends the job token as an auth header but checks for it among its plain
    // headers before these two calls; putting it there too satisfies the check (same header).
    (asJob as unknown as { headers: Record<string, string> }).headers['job-token'] = job.token;
    const connected = await asJob.showConnectedJob();
    assert.equal(connected.id, job.id);
    const agents = await asJob.showConnectedJobK8Agents();
    assert.deepEqual(agents.allowed_agents, []);
    await runner.appendTrace(job, 'make test: 1 failure\n');
    await runner.update(job, 'failed', 'script_failure');
  });

  it('retries, cancels, plays and erases jobs; lists bridges', async () => {
    const failed = (await api.Jobs.all(p.project.id, { pipelineId, scope: 'failed' }))[0];
    assert.equal(failed.failure_reason, 'script_failure');
    const retried = await api.Jobs.retry(p.project.id, failed.id);
    assert.notEqual(retried.id, failed.id);
    assert.equal(retried.status, 'pending');
    const withRetried = await api.Jobs.all(p.project.id, { pipelineId, includeRetried: true });
    assert.ok(withRetried.some((j) => j.id === failed.id));
    const canceled = await api.Jobs.cancel(p.project.id, retried.id);
    assert.equal(canceled.status, 'canceled');
    const erased = await api.Jobs.erase(p.project.id, failed.id);
    assert.deepEqual(erased.artifacts, []);
    await assert.rejects(api.Jobs.play(p.project.id, failed.id), (err: RequestError) => {
      assert.equal(err.cause?.response?.status, 400);
      assert.equal(err.cause?.description, '400 Bad request - Unplayable Job');
      return true;
    });
    const bridges = await api.Jobs.allPipelineBridges(p.project.id, pipelineId);
    assert.deepEqual(bridges.map((b) => [b.name, b.status]), [['child', 'skipped']]);
  });

  it('plays a manual job with variables', async () => {
    const other = await api.Pipelines.create(p.project.id, 'main');
    await runner.run();
    await runner.run();
    const deploy = (await api.Jobs.all(p.project.id, { pipelineId: other.id, scope: 'manual' }))[0];
    const played = await api.Jobs.play(p.project.id, deploy.id, { jobVariablesAttributes: [{ key: 'TARGET', value: 'prod' }] });
    assert.equal(played.status, 'pending');
    const job = await runner.requestJob();
    assert.ok(job.variables.some((v) => v.key === 'TARGET' && v.value === 'prod'));
  });
});
