/**
 * Environments and deployments (issue 31, item 8): environments made by the CI `environment:`
 * keyword with expanded names, a deployment per deploying job following the job's status, the
 * CI_ENVIRONMENT_* variables and environment-scoped CI/CD variables reaching jobs, stopping with
 * the on_stop job, stop_stale, review app deletion, and the CRUD validations of the API.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { sweepCi } from '../../src/workers/ci-sweeper.ts';
import { ciEnvFrom } from '../../src/domain/pipelines/ci-env.ts';
import { environmentSlug } from '../../src/domain/environments/environment-rules.ts';
import { sweepEnvironments } from '../../src/domain/environments/environment-actions.ts';

const CONFIG = `
stages: [build, deploy]
build:
  stage: build
  script: echo build
review:
  stage: deploy
  script: echo deploy
  variables:
    HOST_PREFIX: app
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    url: https://$HOST_PREFIX-$CI_COMMIT_REF_SLUG.example.com
    on_stop: stop_review
    auto_stop_in: 1 week
stop_review:
  stage: deploy
  script: echo stop
  when: manual
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
production:
  stage: deploy
  script: echo production
  when: manual
  environment:
    name: production
    deployment_tier: production
`;

interface Environment { id: number; name: string; slug: string; external_url: string | null; state: string; tier: string; last_deployment?: Deployment | null }
interface Deployment { id: number; iid: number; ref: string; sha: string; status: string; environment: { id: number; name: string }; deployable: { id: number; name: string; status: string } | null; user: { id: number } | null }

const vars = (job: JobPayload) => {
  const out: Record<string, string> = {};
  for (const v of job.variables) out[v.key] = v.value;
  return out;
};

describe('environments and deployments', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  let developerToken: string;
  let reporterToken: string;
  let pipelineId: number;
  let sha: string;

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', suffix: string, token: string, payload?: Record<string, unknown>) =>
    t.request({ method, url: `/api/v4/projects/${p.project.id}${suffix}`, token, ...(payload ? { payload } : {}) });
  const environments = async (query = '') => (await api('GET', `/environments${query}`, p.ownerToken)).json() as Environment[];
  const deployments = async (query = '') => (await api('GET', `/deployments${query}`, p.ownerToken)).json() as Deployment[];
  const member = async (level: number) => {
    const user = await createUser(t.db);
    const res = await api('POST', '/members', p.ownerToken, { user_id: user.id, access_level: level });
    assert.equal(res.statusCode, 201, res.body);
    return createToken(t.db, user, { scopes: ['api'] });
  };

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    runner = await TestRunner.register(t);
    developerToken = await member(30);
    reporterToken = await member(20);
    await pushFiles(t, p, { 'README.md': 'hello\n' });
    sha = await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG }, { branch: 'Feature/One' });
    // Variables of one key at three scopes: the most specific matching one wins.
    for (const [scope, value] of [['*', 'everywhere'], ['review/*', 'any-review'], ['production', 'prod-only']]) {
      const res = await api('POST', '/variables', p.ownerToken, { key: 'TARGET', value, environment_scope: scope });
      assert.equal(res.statusCode, 201, res.body);
    }
    const res = await api('POST', '/variables', p.ownerToken, { key: 'REVIEW_ONLY', value: 'yes', environment_scope: 'review/feature-one' });
    assert.equal(res.statusCode, 201, res.body);
    pipelineId = (await createPipeline(t, p, 'Feature/One')).id;
  });
  after(async () => { await t.close(); });

  it('makes the environments of a pipeline with expanded names, and a deployment per deploying job', async () => {
    const list = await environments();
    assert.deepEqual(list.map((e) => [e.name, e.slug, e.state, e.tier, e.external_url]), [
      ['review/feature-one', environmentSlug('review/feature-one'), 'available', 'development', null],
      ['production', 'production', 'available', 'production', null],
    ]);
    assert.match(list[0].slug, /^review-feature-on-[a-z0-9]{6}$/);
    const deps = await deployments();
    // The stop job deploys nothing; production is manual, so its deployment waits, blocked.
    assert.deepEqual(deps.map((d) => [d.iid, d.environment.name, d.deployable?.name, d.status, d.ref, d.sha]), [
      [1, 'review/feature-one', 'review', 'created', 'Feature/One', sha],
      [2, 'production', 'production', 'created', 'Feature/One', sha],
    ]);
  });

  it('moves the deployment with its job and hands the job its environment variables', async () => {
    await runner.run('success');
    const deps = await deployments('?environment=production');
    assert.deepEqual(deps.map((d) => d.status), ['blocked']);
    const job = await runner.requestJob();
    assert.equal(job.job_info.name, 'review');
    const v = vars(job);
    assert.equal(v.CI_ENVIRONMENT_NAME, 'review/feature-one');
    assert.equal(v.CI_ENVIRONMENT_SLUG, environmentSlug('review/feature-one'));
    assert.equal(v.CI_ENVIRONMENT_ACTION, 'start');
    assert.equal(v.CI_ENVIRONMENT_URL, 'https://app-feature-one.example.com');
    assert.equal(v.CI_ENVIRONMENT_TIER, 'development');
    // All three TARGET values are sent in precedence order; the runner keeps the last.
    assert.deepEqual(job.variables.filter((x) => x.key === 'TARGET').map((x) => x.value), ['everywhere', 'any-review']);
    assert.equal(v.REVIEW_ONLY, 'yes');
    let [review] = await deployments('?environment=review/feature-one');
    assert.equal(review.status, 'running');
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    [review] = await deployments('?environment=review/feature-one&status=success');
    assert.equal(review.status, 'success');
    assert.equal(review.deployable?.status, 'success');

    const env = (await environments('?name=review/feature-one'))[0];
    assert.equal(env.external_url, 'https://app-feature-one.example.com');
    const row = await t.db.selectFrom('environments').selectAll().where('id', '=', env.id).executeTakeFirstOrThrow();
    assert.ok(row.auto_stop_at !== null && Date.parse(row.auto_stop_at) > Date.now() + 6 * 86_400_000);
    const shown = await api('GET', `/environments/${env.id}`, reporterToken);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.equal((shown.json() as Environment).last_deployment?.id, review.id);
    // Lists leave last_deployment out.
    assert.equal('last_deployment' in env, false);
  });

  it('gives a job without an environment only *-scoped variables', async () => {
    const other = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, other, { '.gitlab-ci.yml': 'plain:\n  script: echo hi\n' });
    await t.request({ method: 'POST', url: `/api/v4/projects/${other.project.id}/variables`, token: p.ownerToken, payload: { key: 'S', value: 'review', environment_scope: 'review/*' } });
    await t.request({ method: 'POST', url: `/api/v4/projects/${other.project.id}/variables`, token: p.ownerToken, payload: { key: 'S2', value: 'all' } });
    await createPipeline(t, other);
    const job = await runner.requestJob();
    const v = vars(job);
    assert.equal(v.S, undefined);
    assert.equal(v.S2, 'all');
    assert.equal(v.CI_ENVIRONMENT_NAME, undefined);
    await runner.update(job, 'success');
  });

  it('plays a manual deploy job: the blocked deployment runs and succeeds with it', async () => {
    const jobs = (await api('GET', `/pipelines/${pipelineId}/jobs`, p.ownerToken)).json() as { id: number; name: string }[];
    const production = jobs.find((j) => j.name === 'production')!;
    assert.equal((await api('POST', `/jobs/${production.id}/play`, developerToken)).statusCode, 200);
    const job = await runner.requestJob();
    assert.equal(vars(job).TARGET, 'prod-only');
    assert.equal(vars(job).CI_ENVIRONMENT_TIER, 'production');
    assert.equal((await deployments('?environment=production'))[0].status, 'running');
    await runner.update(job, 'failed', 'script_failure');
    assert.equal((await deployments('?environment=production'))[0].status, 'failed');
    // A retry deploys again: a new deployment for the new job.
    const retried = await api('POST', `/jobs/${production.id}/retry`, developerToken);
    assert.equal(retried.statusCode, 201, retried.body);
    const deps = await deployments('?environment=production&order_by=iid&sort=desc');
    assert.deepEqual(deps.map((d) => [d.iid, d.status, d.deployable?.id]), [[3, 'created', (retried.json() as { id: number }).id], [2, 'failed', production.id]]);
    await runner.run('success');
    assert.equal((await deployments('?environment=production&status=success')).length, 1);
  });

  it('refuses to move a deployment a job made, and lists the merge requests of a deployment', async () => {
    const [review] = await deployments('?environment=review/feature-one');
    const res = await api('PUT', `/deployments/${review.id}`, developerToken, { status: 'failed' });
    assert.equal(res.statusCode, 403);
    assert.match(res.json().message, /^403 Forbidden - Deployments created using/);
    const mrs = await api('GET', `/deployments/${review.id}/merge_requests`, reporterToken);
    assert.equal(mrs.statusCode, 200);
    assert.deepEqual(mrs.json(), []);
    assert.equal((await api('GET', '/deployments/999999', p.ownerToken)).statusCode, 404);
  });

  it('stops an environment by playing its on_stop job; it is stopped when that job succeeds', async () => {
    const env = (await environments('?name=review/feature-one'))[0];
    assert.equal((await api('POST', `/environments/${env.id}/stop`, reporterToken)).statusCode, 403);
    const res = await api('POST', `/environments/${env.id}/stop`, developerToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as Environment).state, 'stopping');
    assert.equal((await jobStatuses(t, p, pipelineId)).stop_review, 'pending');
    const job = await runner.requestJob();
    assert.equal(job.job_info.name, 'stop_review');
    assert.equal(vars(job).CI_ENVIRONMENT_ACTION, 'stop');
    assert.equal((await environments('?states=stopping')).length, 1);
    await runner.update(job, 'success');
    assert.deepEqual((await environments('?states=stopped')).map((e) => e.name), ['review/feature-one']);
    // A stopped environment can be deleted; an available one cannot.
    const prod = (await environments('?name=production'))[0];
    assert.equal((await api('DELETE', `/environments/${prod.id}`, developerToken)).statusCode, 403);
  });

  it('schedules stopped review apps for deletion (dry run first) and the sweep deletes them a week later', async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.equal((await api('DELETE', '/environments/review_apps', reporterToken)).statusCode, 401);
    let res = await api('DELETE', `/environments/review_apps?before=${future}`, developerToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((res.json() as { scheduled_entries: { name: string }[] }).scheduled_entries.map((e) => e.name), ['review/feature-one']);
    assert.deepEqual(res.json().unprocessable_entries, []);
    let row = await t.db.selectFrom('environments').selectAll().where('name', '=', 'review/feature-one').executeTakeFirstOrThrow();
    assert.equal(row.auto_delete_at, null);
    // Default `before` is 30 days ago: nothing that old.
    res = await api('DELETE', '/environments/review_apps?dry_run=false', developerToken);
    assert.deepEqual(res.json().scheduled_entries, []);
    res = await api('DELETE', `/environments/review_apps?dry_run=false&before=${future}`, developerToken);
    assert.equal(res.json().scheduled_entries.length, 1);
    row = await t.db.selectFrom('environments').selectAll().where('name', '=', 'review/feature-one').executeTakeFirstOrThrow();
    assert.ok(row.auto_delete_at !== null && Date.parse(row.auto_delete_at) > Date.now() + 6 * 86_400_000);
    await sweepCi(ciEnvFrom(t.db, t.config), new Date(Date.now() + 8 * 86_400_000));
    assert.deepEqual((await environments()).map((e) => e.name), ['production']);
  });

  it('creates, updates and deletes environments with the model validations', async () => {
    const post = (payload: Record<string, unknown>, token = developerToken) => api('POST', '/environments', token, payload);
    assert.equal((await post({ name: 'qa' }, reporterToken)).statusCode, 403);
    let res = await post({ name: 'Staging 1', external_url: 'https://staging.example.com' });
    assert.equal(res.statusCode, 201, res.body);
    const staging = res.json() as Environment & { project: { id: number } };
    assert.deepEqual(
      [staging.name, staging.slug, staging.tier, staging.state, staging.external_url, staging.project.id],
      ['Staging 1', environmentSlug('Staging 1'), 'staging', 'available', 'https://staging.example.com', p.project.id],
    );
    res = await post({ name: 'Staging 1' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { name: ['has already been taken'] } });
    res = await post({ name: '/bad', external_url: 'ftp://x.example.com' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      message: {
        name: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"],
        external_url: ['is blocked: Only allowed schemes are http, https'],
      },
    });
    res = await post({ name: 'x', slug: 'mine' });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'slug is automatically generated and cannot be changed' }]);
    res = await post({ name: 'x', tier: 'moon' });
    assert.equal(res.statusCode, 400);
    res = await post({});
    assert.deepEqual([res.statusCode, res.json()], [400, { message: '400 Bad request - "name" not given' }]);

    res = await api('PUT', `/environments/${staging.id}`, developerToken, { external_url: 'https://new.example.com', tier: 'testing' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json().external_url, res.json().tier, res.json().slug], ['https://new.example.com', 'testing', staging.slug]);
    res = await api('PUT', `/environments/${staging.id}`, developerToken, { external_url: '' });
    assert.equal(res.json().external_url, null);
    assert.equal((await api('PUT', '/environments/999999', developerToken, { external_url: 'https://a.example.com' })).statusCode, 404);

    res = await api('GET', '/environments?name=a&search=abc', p.ownerToken);
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'name, search cannot be used together' }]);
    assert.deepEqual((await environments('?search=STAG')).map((e) => e.name), ['Staging 1']);

    // Without a stop job an environment stops at once, and may then be deleted.
    res = await api('POST', `/environments/${staging.id}/stop`, developerToken);
    assert.equal(res.json().state, 'stopped');
    assert.equal((await api('DELETE', `/environments/${staging.id}`, reporterToken)).statusCode, 403);
    assert.equal((await api('DELETE', `/environments/${staging.id}`, developerToken)).statusCode, 204);
    assert.equal((await api('GET', `/environments/${staging.id}`, p.ownerToken)).statusCode, 404);
  });

  it('stops stale environments', async () => {
    const res = await api('POST', '/environments', developerToken, { name: 'old-one' });
    const old = res.json() as Environment;
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await t.db.updateTable('environments').set({ updated_at: longAgo }).where('id', '=', old.id).execute();
    const soon = new Date(Date.now() - 86_400_000).toISOString();
    let r = await api('POST', `/environments/stop_stale?before=${soon}`, developerToken);
    assert.deepEqual([r.statusCode, r.json()], [400, { message: '400 Bad request - Invalid Date' }]);
    const before = new Date(Date.now() - 20 * 86_400_000).toISOString();
    assert.equal((await api('POST', `/environments/stop_stale?before=${before}`, reporterToken)).statusCode, 403);
    r = await api('POST', `/environments/stop_stale?before=${before}`, developerToken);
    assert.deepEqual([r.statusCode, r.json()], [200, { message: 'Successfully requested stop for all stale environments' }]);
    const states = Object.fromEntries((await environments()).map((e) => [e.name, e.state]));
    assert.deepEqual(states, { production: 'available', 'old-one': 'stopped' });
    // The search is the start of the name, with LIKE's wildcards taken literally.
    assert.deepEqual((await environments('?search=OLD-')).map((e) => e.name), ['old-one']);
    assert.deepEqual(await environments('?search=old_'), []);
    assert.deepEqual(await environments('?search=ne'), []);
  });

  it('records deployments made through the API and moves them through the state machine', async () => {
    const post = (payload: Record<string, unknown>, token = developerToken) => api('POST', '/deployments', token, payload);
    assert.equal((await post({ environment: 'external', sha, ref: 'main', tag: false, status: 'running' }, reporterToken)).statusCode, 403);
    let res = await post({ environment: 'external', sha, ref: 'main', tag: false, status: 'running' });
    assert.equal(res.statusCode, 201, res.body);
    const d = res.json() as Deployment;
    assert.deepEqual([d.status, d.deployable, d.environment.name, d.ref], ['running', null, 'external', 'main']);
    res = await api('PUT', `/deployments/${d.id}`, developerToken, { status: 'success' });
    assert.equal(res.json().status, 'success');
    res = await api('PUT', `/deployments/${d.id}`, developerToken, { status: 'success' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { status: ['cannot transition via "succeed"'] } }]);
    res = await api('PUT', `/deployments/${d.id}`, developerToken, { status: 'created' });
    assert.equal(res.statusCode, 400);
    res = await post({ environment: 'external', sha, ref: 'main', tag: false, status: 'bogus' });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'status does not have a valid value' }]);
    res = await post({ environment: '', sha, ref: 'main', tag: false, status: 'success' });
    assert.equal(res.statusCode, 400);
    const list = await deployments('?order_by=updated_at&sort=desc&updated_after=2000-01-01T00:00:00Z');
    assert.equal(list[0].id, d.id);
    const shown = await api('GET', `/deployments/${d.id}`, reporterToken);
    assert.deepEqual([shown.statusCode, shown.json().user.id], [200, shown.json().user.id]);
  });

  it('links the merge requests merged into the ref since the previous deployment to a successful one', async () => {
    let res = await api('POST', '/repository/branches', p.ownerToken, { branch: 'feat-x', ref: 'main' });
    assert.equal(res.statusCode, 201, res.body);
    res = await api('POST', '/repository/files/x.txt', p.ownerToken, { branch: 'feat-x', content: 'x\n', commit_message: 'Add x' });
    assert.equal(res.statusCode, 201, res.body);
    res = await api('POST', '/merge_requests', p.ownerToken, { source_branch: 'feat-x', target_branch: 'main', title: 'Add x' });
    assert.equal(res.statusCode, 201, res.body);
    const mr = res.json() as { id: number; iid: number };
    res = await api('PUT', `/merge_requests/${mr.iid}/merge`, p.ownerToken);
    assert.equal(res.statusCode, 200, res.body);
    const deploy = async () => {
      const r = await api('POST', '/deployments', developerToken, { environment: 'live', sha, ref: 'main', tag: false, status: 'success' });
      assert.equal(r.statusCode, 201, r.body);
      return (r.json() as Deployment).id;
    };
    const first = await deploy();
    res = await api('GET', `/deployments/${first}/merge_requests`, reporterToken);
    assert.deepEqual((res.json() as { id: number; state: string }[]).map((m) => [m.id, m.state]), [[mr.id, 'merged']]);
    // Already shipped by the first: the next deployment ships nothing new.
    const second = await deploy();
    res = await api('GET', `/deployments/${second}/merge_requests`, reporterToken);
    assert.deepEqual(res.json(), []);
  });

  it('stops environments whose auto_stop_at has passed on the sweep', async () => {
    const production = (await environments('?name=production'))[0];
    assert.equal(production.state, 'available');
    const past = new Date(Date.now() - 60_000).toISOString();
    await t.db.updateTable('environments').set({ auto_stop_at: past }).where('id', '=', production.id).execute();
    await sweepEnvironments(ciEnvFrom(t.db, t.config), new Date());
    const row = await t.db.selectFrom('environments').selectAll().where('id', '=', production.id).executeTakeFirstOrThrow();
    // No stop job: stopped at once, and the timer is spent.
    assert.deepEqual([row.state, row.auto_stop_at], ['stopped', null]);
  });

  it('cancels the deployments of a canceled pipeline with their jobs', async () => {
    const last = Math.max(...(await deployments('?per_page=100')).map((d) => d.iid));
    const pipeline = await createPipeline(t, p, 'Feature/One');
    const res = await api('POST', `/pipelines/${pipeline.id}/cancel`, developerToken);
    assert.equal(res.statusCode, 200, res.body);
    const ours = (await deployments('?per_page=100')).filter((d) => d.iid > last);
    const statuses = Object.fromEntries(ours.map((d) => [d.environment.name, d.status]));
    assert.deepEqual(statuses, { 'review/feature-one': 'canceled', production: 'canceled' });
    // The review app deleted by the sweep is made again by the new pipeline.
    assert.equal((await environments('?name=review/feature-one')).length, 1);
  });
});
