/**
 * Job-token authentication (spec, Authentication; reference §3.1, §5.1): GET /job and
 * GET /job/allowed_agents by JOB-TOKEN header, job_token parameter or Bearer, valid only while the
 * job runs; other credentials get 404 Job Not Found.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';

describe('job tokens', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  let job: JobPayload;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build: {script: x}\n' });
    await createPipeline(t, p);
    runner = await TestRunner.register(t);
    job = await runner.requestJob();
  });
  after(async () => { await t.close(); });

  it('resolves the running job from the JOB-TOKEN header, the job_token parameter and Bearer', async () => {
    for (const how of [
      { headers: { 'job-token': job.token }, url: '/api/v4/job' },
      { headers: {}, url: `/api/v4/job?job_token=${job.token}` },
      { headers: { authorization: `Bearer ${job.token}` }, url: '/api/v4/job' },
    ]) {
      const res = await t.request({ method: 'GET', url: how.url, headers: how.headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().id, job.id);
      assert.equal(res.json().status, 'running');
      assert.equal(res.json().user.id, p.owner.id);
    }
  });

  it('shows the job token owner', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/job/allowed_agents', headers: { 'job-token': job.token } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.allowed_agents, []);
    assert.deepEqual(body.job, { id: job.id, name: 'build', stage: 'test', project_id: p.project.id, project_name: p.project.name });
    const { pipeline_id: pipelineId } = await t.db.selectFrom('ci_builds').select('pipeline_id').where('id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal(body.pipeline.id, pipelineId);
    assert.equal(body.pipeline.web_url, `http://kiln.test/${p.fullPath}/-/pipelines/${pipelineId}`);
    assert.equal(body.project.path_with_namespace, p.fullPath);
    assert.deepEqual(Object.keys(body.user).sort(), ['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
    assert.equal(body.user.id, p.owner.id);
  });

  it('answers 404 Job Not Found to other credentials and 401 to unknown tokens', async () => {
    const pat = await t.request({ method: 'GET', url: '/api/v4/job', token: p.ownerToken });
    assert.deepEqual([pat.statusCode, pat.json()], [404, { message: '404 Job Not Found' }]);
    const unknown = await t.request({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': 'not-a-token-at-all' } });
    assert.deepEqual([unknown.statusCode, unknown.json()], [401, { message: '401 Unauthorized' }]);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/job' })).statusCode, 401);
  });

  it('stops working once the job has finished', async () => {
    await runner.update(job, 'success');
    const res = await t.request({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': job.token } });
    assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
    const agents = await t.request({ method: 'GET', url: '/api/v4/job/allowed_agents', headers: { 'job-token': job.token } });
    assert.equal(agents.statusCode, 401);
  });
});
