/**
 * Pipelines' persistent refs (issue 34; the Service 15.2's Ci::PersistentRef, see
 * src/domain/pipelines/persistent-ref.ts): refs/pipelines/<id> is written at the pipeline's commit
 * when a job of it starts, offered first among the job's refspecs, kept while the pipeline has
 * jobs to run even after its branch moved on or was deleted, and deleted when the pipeline
 * completes (success, failed, canceled) or is deleted.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { refTarget } from '../../src/domain/repositories/git-read.ts';

const CONFIG = 'build:\n  stage: build\n  script: [make]\ntest:\n  stage: test\n  script: [make test]\n';

describe('pipeline persistent refs', () => {
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
  // Each test asks for "the next job": leave no job of an earlier test waiting in the queue.
  beforeEach(async () => {
    await t.db.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['created', 'pending', 'running']).execute();
  });

  const ref = (id: number) => `refs/pipelines/${id}`;
  const pipelineStatus = async (id: number) => (await t.db.selectFrom('ci_pipelines').select('status').where('id', '=', id)
    .executeTakeFirstOrThrow()).status;

  it('writes the ref when a job starts, offers it first, and deletes it when the pipeline succeeds', async () => {
    const pipeline = await createPipeline(t, p);
    // Created, no job started: no ref yet (Ci::Build writes it on pending → running).
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), null);

    const build = await runner.requestJob();
    assert.equal(build.job_info.name, 'build');
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), pipeline.sha);
    assert.deepEqual(build.git_info.refspecs, [`+${ref(pipeline.id)}:${ref(pipeline.id)}`, '+refs/heads/main:refs/remotes/origin/main']);
    assert.equal((await runner.update(build, 'success')).statusCode, 200);
    // Still running (the next stage waits): the ref stays.
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), pipeline.sha);

    const test = await runner.requestJob();
    assert.equal(test.job_info.name, 'test');
    assert.equal(test.git_info.refspecs[0], `+${ref(pipeline.id)}:${ref(pipeline.id)}`);
    assert.equal((await runner.update(test, 'success')).statusCode, 200);
    assert.equal(await pipelineStatus(pipeline.id), 'success');
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), null);
    // The branch is untouched, and no push event came of the pipeline's ref.
    assert.equal(await refTarget(p.gitDir, 'refs/heads/main'), pipeline.sha);
  });

  it('keeps the ref after the branch is deleted, and deletes it when the pipeline fails', async () => {
    const sha = await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'doomed.txt': 'x\n' }, { branch: 'doomed' });
    const pipeline = await createPipeline(t, p, 'doomed');
    const build = await runner.requestJob();
    const del = await t.request({
      method: 'DELETE', url: `/api/v4/projects/${p.project.id}/repository/branches/doomed`, token: p.ownerToken,
    });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal(await refTarget(p.gitDir, 'refs/heads/doomed'), null);
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), sha);
    assert.equal((await runner.update(build, 'failed', 'script_failure')).statusCode, 200);
    assert.equal(await pipelineStatus(pipeline.id), 'failed');
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), null);
  });

  it('deletes the ref when the pipeline is canceled, and writes it again when a retried job starts', async () => {
    const pipeline = await createPipeline(t, p);
    const build = await runner.requestJob();
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), pipeline.sha);
    const cancel = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}/cancel`, token: p.ownerToken });
    assert.equal(cancel.statusCode, 200, cancel.body);
    assert.equal(await pipelineStatus(pipeline.id), 'canceled');
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), null);

    const retry = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/jobs/${build.id}/retry`, token: p.ownerToken });
    assert.equal(retry.statusCode, 201, retry.body);
    const again = await runner.requestJob();
    assert.equal(again.git_info.sha, pipeline.sha);
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), pipeline.sha);
    assert.equal(again.git_info.refspecs[0], `+${ref(pipeline.id)}:${ref(pipeline.id)}`);
  });

  it('deletes the ref of a pipeline that is deleted while it runs', async () => {
    const pipeline = await createPipeline(t, p);
    await runner.requestJob();
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), pipeline.sha);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`, token: p.ownerToken });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal(await refTarget(p.gitDir, ref(pipeline.id)), null);
  });
});
