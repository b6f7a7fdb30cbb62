/**
 * The runner protocol (CONTRACT §4; issue 6): registration, verify, unregister, job requests with
 * tags, the job payload, state updates, log appends with Content-Range, artifacts up and down.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { digest } from '../../src/domain/tokens/secret.ts';

const CONFIG = `
variables:
  GLOBAL: "g"
default:
  image: alpine:3.20
  before_script: [echo before]
build:
  stage: build
  script: [make]
  after_script: [echo after]
  variables: {JOB_VAR: "j"}
  artifacts:
    paths: [out/]
    expire_in: 1 week
    reports:
      junit: report.xml
test:
  stage: test
  script: make test
  tags: [linux]
`;

describe('runner protocol', () => {
  let t: TestApp;
  let p: CiProject;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
  });
  after(async () => { await t.close(); });
  // Each test asks for "the next job": leave no job of an earlier test waiting in the queue.
  beforeEach(async () => {
    await t.db.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['created', 'pending', 'running']).execute();
  });

  it('registers a runner with the registration token, storing only a digest of its token', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, description: 'r1', tag_list: 'linux, docker', maintainer_note: 'old note', paused: true } });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['id', 'token', 'token_expires_at']);
    const row = await t.db.selectFrom('ci_runners').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, digest(body.token));
    assert.equal(row.maintenance_note, 'old note');
    assert.equal(row.active, 0);
    assert.equal(row.tag_list, 'docker linux');
    const both = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, maintainer_note: 'old', maintenance_note: 'new' } });
    const r2 = await t.db.selectFrom('ci_runners').selectAll().where('id', '=', both.json().id).executeTakeFirstOrThrow();
    assert.equal(r2.maintenance_note, 'new');
  });

  it('refuses a wrong registration token, a missing one, and invalid runners', async () => {
    const wrong = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: 'nope' } });
    assert.deepEqual([wrong.statusCode, wrong.json()], [403, { message: '403 Forbidden' }]);
    const missing = await t.request({ method: 'POST', url: '/api/v4/runners', payload: {} });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "token" not given' }]);
    const untagged = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, run_untagged: false } });
    assert.deepEqual([untagged.statusCode, untagged.json()], [400, { message: { tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] } }]);
    const long = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, maintenance_note: 'x'.repeat(1025) } });
    assert.deepEqual(long.json(), { message: { maintenance_note: ['is too long (maximum is 1024 characters)'] } });
    const level = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, access_level: 'everything' } });
    assert.deepEqual(level.json(), { error: 'access_level does not have a valid value' });
  });

  it('verifies and unregisters runners by their token', async () => {
    const runner = await TestRunner.register(t);
    const ok = await t.request({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: runner.token } });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().id, runner.id);
    const bad = await t.request({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: 'unknown' } });
    assert.equal(bad.statusCode, 403);
    const del = await t.request({ method: 'DELETE', url: '/api/v4/runners', payload: { token: runner.token } });
    assert.equal(del.statusCode, 204);
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: runner.token } })).statusCode, 403);
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: runner.token } })).statusCode, 403);
  });

  it('hands a runner the job payload, matching tags, and answers 204 when nothing matches', async () => {
    const pipeline = await createPipeline(t, p);
    const tagged = await TestRunner.register(t, { tags: ['gpu'], runUntagged: false });
    assert.equal(await tagged.request(), null);
    const runner = await TestRunner.register(t, { description: 'builder', tags: ['linux'] });
    const job = await runner.requestJob();
    assert.equal(job.job_info.name, 'build');
    assert.deepEqual(job.job_info, { ...job.job_info, stage: 'build', project_id: p.project.id, project_name: p.project.name });
    assert.match(job.token, /^[A-Za-z0-9_-]{20}$/);
    const row = await t.db.selectFrom('ci_builds').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, digest(job.token));
    assert.equal(row.status, 'running');
    assert.equal(row.runner_id, runner.id);
    assert.equal(job.git_info.repo_url, `http://gitlab-ci-token:${job.token}@kiln.test/${p.fullPath}.git`);
    assert.equal(job.git_info.sha, pipeline.sha);
    assert.equal(job.git_info.ref, 'main');
    assert.equal(job.git_info.ref_type, 'branch');
    // The pipeline's persistent ref first (Ci::BuildRunnerPresenter#refspecs; test/api/pipeline-refs.test.ts).
    assert.deepEqual(job.git_info.refspecs, [`+refs/pipelines/${pipeline.id}:refs/pipelines/${pipeline.id}`, '+refs/heads/main:refs/remotes/origin/main']);
    assert.equal(typeof job.job_age, 'number');
    assert.equal(job.allow_git_fetch, true);
    assert.deepEqual(job.image, { name: 'alpine:3.20', entrypoint: null, ports: [] });
    assert.deepEqual(job.steps, [
      { name: 'script', script: ['echo before', 'make'], timeout: 3600, when: 'on_success', allow_failure: false },
      { name: 'after_script', script: ['echo after'], timeout: 3600, when: 'always', allow_failure: true },
    ]);
    assert.deepEqual(job.artifacts.map((a) => [a.artifact_type, a.paths]), [['archive', ['out/']], ['junit', ['report.xml']]]);
    const vars = Object.fromEntries(job.variables.map((v) => [v.key, v.value]));
    for (const [k, v] of Object.entries({
      CI: 'true', CI_JOB_ID: String(job.id), CI_BUILD_ID: String(job.id), CI_JOB_NAME: 'build', CI_BUILD_NAME: 'build',
      CI_JOB_STAGE: 'build', CI_BUILD_STAGE: 'build', CI_COMMIT_SHA: pipeline.sha, CI_BUILD_REF: pipeline.sha,
      CI_COMMIT_BEFORE_SHA: '0'.repeat(40), CI_BUILD_BEFORE_SHA: '0'.repeat(40), CI_COMMIT_REF_NAME: 'main', CI_BUILD_REF_NAME: 'main',
      CI_COMMIT_REF_SLUG: 'main', CI_BUILD_REF_SLUG: 'main', CI_REPOSITORY_URL: job.git_info.repo_url, CI_BUILD_REPO: job.git_info.repo_url,
      CI_JOB_TOKEN: job.token, CI_BUILD_TOKEN: job.token, CI_PIPELINE_ID: String(pipeline.id), CI_PROJECT_ID: String(p.project.id),
      CI_PROJECT_PATH: p.fullPath, CI_SERVER_URL: 'http://kiln.test', CI_API_V4_URL: 'http://kiln.test/api/v4', CI_COMMIT_BRANCH: 'main',
      GLOBAL: 'g', JOB_VAR: 'j', CI_RUNNER_DESCRIPTION: 'builder',
    })) assert.equal(vars[k], v, k);
    // Conditional ones: only for manual jobs, tags and triggered pipelines.
    for (const k of ['CI_JOB_MANUAL', 'CI_BUILD_MANUAL', 'CI_COMMIT_TAG', 'CI_BUILD_TAG', 'CI_PIPELINE_TRIGGERED', 'CI_BUILD_TRIGGERED']) assert.equal(vars[k], undefined, k);
    assert.equal(job.variables.find((v) => v.key === 'CI_JOB_TOKEN')!.masked, true);
    // The tagged test job waits for the build stage; nothing else is pending.
    assert.equal(await runner.request(), null);
    await runner.update(job, 'success');
  });

  it('appends to the log with Content-Range, answering 416 with the current range on a gap or overlap', async () => {
    await createPipeline(t, p);
    const runner = await TestRunner.register(t, { tags: ['linux'] });
    const job = await runner.requestJob();
    const first = await runner.appendTrace(job, 'hello ');
    assert.equal(first.statusCode, 202);
    assert.equal(first.headers.range, '0-6');
    assert.equal(first.headers['job-status'], 'running');
    const second = await runner.appendTrace(job, 'world\n');
    assert.equal(second.headers.range, '0-12');
    const gap = await runner.appendTrace(job, 'late', 20);
    assert.equal(gap.statusCode, 416);
    assert.equal(gap.headers.range, '0-12');
    assert.deepEqual(gap.json(), { error: '416 Range Not Satisfiable' });
    const overlap = await runner.appendTrace(job, 'again', 3);
    assert.equal(overlap.statusCode, 416);
    const noRange = await t.request({ method: 'PATCH', url: `/api/v4/jobs/${job.id}/trace`, payload: 'x', headers: { 'job-token': job.token, 'content-type': 'text/plain' } });
    assert.deepEqual([noRange.statusCode, noRange.json()], [400, { error: '400 Missing header Content-Range' }]);
    const wrongToken = await t.request({ method: 'PATCH', url: `/api/v4/jobs/${job.id}/trace`, payload: 'x', headers: { 'job-token': 'nope', 'content-range': '12-12' } });
    assert.equal(wrongToken.statusCode, 403);
    const trace = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/trace`, token: p.ownerToken });
    assert.equal(trace.statusCode, 200);
    assert.equal(trace.body, 'hello world\n');
    assert.equal(trace.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(trace.headers['content-disposition'], `infile; filename="${job.id}.log"`);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    // Finished: the token no longer works, and the runner learns the job's status.
    const closed = await runner.appendTrace(job, 'more');
    assert.equal(closed.statusCode, 403);
    assert.deepEqual(closed.json(), { message: '403 Forbidden - Job is not running' });
    assert.equal(closed.headers['job-status'], 'success');
  });

  it('uploads artifacts as multipart and serves them back to a later job with its own token', async () => {
    const pipeline = await createPipeline(t, p);
    const runner = await TestRunner.register(t, { tags: ['linux'] });
    const build = await runner.requestJob();
    const archive = Buffer.alloc(300_000, 7);
    const up = await runner.uploadArtifact(build, archive, { expireIn: '2 days', metadata: Buffer.from('meta') });
    assert.equal(up.statusCode, 201, up.body);
    const again = await runner.uploadArtifact(build, archive);
    assert.equal(again.statusCode, 400);
    const junit = await runner.uploadArtifact(build, Buffer.from('<xml/>'), { type: 'junit', format: 'gzip', filename: 'junit.xml.gz' });
    assert.equal(junit.statusCode, 201, junit.body);
    await runner.appendTrace(build, 'built\n');
    await runner.update(build, 'success');
    const shown = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${build.id}`, token: p.ownerToken })).json();
    assert.deepEqual(shown.artifacts_file, { filename: 'artifacts.zip', size: 300_000 });
    assert.deepEqual(shown.artifacts.map((a: { file_type: string; file_format: string }) => [a.file_type, a.file_format]), [['archive', 'zip'], ['metadata', 'gzip'], ['junit', 'gzip'], ['trace', 'raw']]);
    const expires = Date.parse(shown.artifacts_expire_at) - Date.now();
    assert.ok(expires > 47 * 3600_000 && expires <= 48 * 3600_000, shown.artifacts_expire_at);

    const test = await runner.requestJob();
    assert.equal(test.job_info.name, 'test');
    assert.deepEqual(test.dependencies, [{ id: build.id, name: 'build', token: test.token, artifacts_file: { filename: 'artifacts.zip', size: 300_000 } }]);
    const download = await t.request({ method: 'GET', url: `/api/v4/jobs/${build.id}/artifacts`, headers: { 'job-token': test.token } });
    assert.equal(download.statusCode, 200);
    assert.ok(download.rawPayload.equals(archive));
    assert.equal(download.headers['content-disposition'], 'attachment; filename="artifacts.zip"');
    const byParam = await t.request({ method: 'GET', url: `/api/v4/jobs/${build.id}/artifacts?token=${test.token}` });
    assert.equal(byParam.statusCode, 200);
    const finishedToken = await t.request({ method: 'GET', url: `/api/v4/jobs/${build.id}/artifacts`, headers: { 'job-token': build.token } });
    assert.equal(finishedToken.statusCode, 403);
    await runner.update(test, 'success');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`, token: p.ownerToken })).json().status, 'success');
  });

  it('fails jobs with the runner\'s failure_reason and validates state and reason', async () => {
    const pipeline = await createPipeline(t, p);
    const runner = await TestRunner.register(t, { tags: ['linux'] });
    const job = await runner.requestJob();
    const badState = await t.request({ method: 'PUT', url: `/api/v4/jobs/${job.id}`, payload: { token: job.token, state: 'exploded' } });
    assert.deepEqual([badState.statusCode, badState.json()], [400, { error: 'state does not have a valid value' }]);
    const badReason = await t.request({ method: 'PUT', url: `/api/v4/jobs/${job.id}`, payload: { token: job.token, state: 'failed', failure_reason: 'bad_luck' } });
    assert.deepEqual(badReason.json(), { error: 'failure_reason does not have a valid value' });
    const heartbeat = await runner.update(job, 'running');
    assert.equal(heartbeat.headers['job-status'], 'running');
    const failed = await runner.update(job, 'failed', 'script_failure');
    assert.equal(failed.statusCode, 200);
    assert.equal(failed.headers['job-status'], 'failed');
    const shown = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}`, token: p.ownerToken })).json();
    assert.equal(shown.status, 'failed');
    assert.equal(shown.failure_reason, 'script_failure');
    assert.ok(shown.finished_at);
    assert.equal(typeof shown.duration, 'number');
    assert.deepEqual(await jobStatuses(t, p, pipeline.id), { build: 'failed', test: 'skipped' });
    const late = await runner.update(job, 'success');
    assert.equal(late.statusCode, 403);
    assert.equal(late.headers['job-status'], 'failed');
    const unknownJob = await t.request({ method: 'PUT', url: '/api/v4/jobs/999999', payload: { token: job.token, state: 'success' } });
    assert.equal(unknownJob.statusCode, 403);
  });

  it('gives a paused runner nothing', async () => {
    await createPipeline(t, p);
    const runner = await TestRunner.register(t, { tags: ['linux'] });
    await t.db.updateTable('ci_runners').set({ active: 0 }).where('id', '=', runner.id).execute();
    assert.equal(await runner.request(), null);
    const contacted = await t.db.selectFrom('ci_runners').select('contacted_at').where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.ok(contacted.contacted_at);
  });
});
