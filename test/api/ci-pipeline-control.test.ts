/**
 * Pipeline control and variables reaching jobs (issue 20, items 3 and 4): POST …/pipeline with
 * variables, GET …/variables, cancel, retry, delete, latest; the job payload's CI/CD variables in
 * the Service's precedence, protected ones only on the default branch; a cancel racing a runner's
 * report loses no transition.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';
import { compositeStatus } from '../../src/domain/pipelines/composite-status.ts';

const CONFIG = `
stages: [build, test]
variables:
  SHARED: from-yaml
build:
  stage: build
  script: echo build
test:
  stage: test
  script: echo test
`;

describe('pipeline control and CI/CD variables in jobs', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  let developerToken: string;
  let groupId: number;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    const owner = await createUser(t.db);
    const ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
    // A project in a sub-group, so that group variables come from two levels.
    const top = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Top', path: 'top' } });
    const sub = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Sub', path: 'sub', parent_id: top.json().id } });
    assert.equal(sub.statusCode, 201, sub.body);
    groupId = sub.json().id;
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'app', namespace_id: groupId } });
    assert.equal(res.statusCode, 201, res.body);
    const project = await t.db.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    p = { project, owner, ownerToken, fullPath: res.json().path_with_namespace, gitDir: repositoryPath(t.config.storages, project.repository_storage, project.disk_path) };
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'feature.txt': 'f' }, { branch: 'feature' });
    p.project = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
    const developer = await createUser(t.db);
    developerToken = await createToken(t.db, developer, { scopes: ['api'] });
    await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: { user_id: developer.id, access_level: 30 } });
    runner = await TestRunner.register(t);

    const v = async (url: string, token: string, payload: Record<string, unknown>) => {
      const r = await t.request({ method: 'POST', url, token, payload });
      assert.equal(r.statusCode, 201, r.body);
    };
    await v('/api/v4/admin/ci/variables', ROOT_TOKEN, { key: 'SHARED', value: 'instance' });
    await v('/api/v4/admin/ci/variables', ROOT_TOKEN, { key: 'INSTANCE_ONLY', value: 'i' });
    await v(`/api/v4/groups/${top.json().id}/variables`, ownerToken, { key: 'SHARED', value: 'top-group' });
    await v(`/api/v4/groups/${top.json().id}/variables`, ownerToken, { key: 'TOP_ONLY', value: 'top', variable_type: 'file' });
    await v(`/api/v4/groups/${groupId}/variables`, ownerToken, { key: 'SHARED', value: 'sub-group' });
    await v(`/api/v4/projects/${project.id}/variables`, ownerToken, { key: 'SHARED', value: 'project' });
    await v(`/api/v4/projects/${project.id}/variables`, ownerToken, { key: 'SECRET', value: 'sup3r-s3cr3t-value', masked: true, protected: true });
    await v(`/api/v4/projects/${project.id}/variables`, ownerToken, { key: 'RAW', value: '$INSTANCE_ONLY', raw: true });
    await v(`/api/v4/projects/${project.id}/variables`, ownerToken, { key: 'EXPANDED', value: '${INSTANCE_ONLY}-$CI_COMMIT_REF_NAME-$UNDEFINED' });
    await v(`/api/v4/projects/${project.id}/variables`, ownerToken, { key: 'PROD_ONLY', value: 'p', environment_scope: 'production' });
  });
  after(async () => { await t.close(); });

  const base = () => `/api/v4/projects/${p.project.id}`;
  const create = async (payload: Record<string, unknown>, token = p.ownerToken) => {
    const res = await t.request({ method: 'POST', url: `${base()}/pipeline`, token, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; status: string };
  };
  const action = (id: number, verb: 'cancel' | 'retry', token = p.ownerToken) => t.request({ method: 'POST', url: `${base()}/pipelines/${id}/${verb}`, token });

  it('creates a pipeline with variables, shows them, and hands jobs every level in precedence order', async () => {
    const pipeline = await create({ ref: 'main', variables: [{ key: 'SHARED', value: 'pipeline' }, { key: 'CONFIG_FILE', value: 'a: 1', variable_type: 'file' }] });
    const stored = await t.db.selectFrom('ci_pipeline_variables').selectAll().where('pipeline_id', '=', pipeline.id).execute();
    assert.equal(stored.length, 2);
    assert.ok(stored.every((r) => r.encrypted_value.startsWith('v1:') && !r.encrypted_value.includes('pipeline')));

    let res = await t.request({ method: 'GET', url: `${base()}/pipelines/${pipeline.id}/variables`, token: p.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), [
      { variable_type: 'env_var', key: 'SHARED', value: 'pipeline' },
      { variable_type: 'file', key: 'CONFIG_FILE', value: 'a: 1' },
    ]);
    // A Developer who did not create the pipeline may not read its variables.
    res = await t.request({ method: 'GET', url: `${base()}/pipelines/${pipeline.id}/variables`, token: developerToken });
    assert.equal(res.statusCode, 403);

    const job = await runner.requestJob();
    const shared = job.variables.filter((v) => v.key === 'SHARED').map((v) => v.value);
    // yaml < instance < top group < sub-group < project < pipeline: the last one wins at run time.
    assert.deepEqual(shared, ['from-yaml', 'instance', 'top-group', 'sub-group', 'project', 'pipeline']);
    const byKey = Object.fromEntries(job.variables.map((v) => [v.key, v]));
    assert.deepEqual(byKey.SECRET, { key: 'SECRET', value: 'sup3r-s3cr3t-value', public: false, masked: true });
    assert.deepEqual(byKey.TOP_ONLY, { key: 'TOP_ONLY', value: 'top', public: false, masked: false, file: true });
    assert.deepEqual(byKey.RAW, { key: 'RAW', value: '$INSTANCE_ONLY', public: false, masked: false, raw: true });
    // Variables inside variables are expanded, unknown references kept, raw ones left alone.
    assert.equal(byKey.EXPANDED.value, 'i-main-$UNDEFINED');
    assert.deepEqual(byKey.CONFIG_FILE, { key: 'CONFIG_FILE', value: 'a: 1', public: false, masked: false, file: true });
    assert.equal(byKey.INSTANCE_ONLY.value, 'i');
    assert.equal(byKey.PROD_ONLY, undefined, 'environment-scoped variables do not reach jobs without that environment');
    assert.equal((await action(pipeline.id, 'cancel')).statusCode, 200);
  });

  it('gives protected variables only to the default branch', async () => {
    const pipeline = await create({ ref: 'feature' });
    const job = await runner.requestJob();
    assert.equal(job.git_info.ref, 'feature');
    assert.equal(job.variables.find((v) => v.key === 'SECRET'), undefined);
    assert.equal(job.variables.filter((v) => v.key === 'SHARED').at(-1)!.value, 'project');
    assert.equal((await action(pipeline.id, 'cancel')).statusCode, 200);
  });

  it('refuses bad pipeline variables with the base errors, creating nothing', async () => {
    const before = await t.db.selectFrom('ci_pipelines').select('id').execute();
    let res = await t.request({ method: 'POST', url: `${base()}/pipeline`, token: p.ownerToken, payload: { ref: 'main', variables: [{ key: 'bad key', value: 'x' }] } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { base: ["Variables key can contain only letters, digits and '_'."] } }]);
    res = await t.request({ method: 'POST', url: `${base()}/pipeline`, token: p.ownerToken, payload: { ref: 'main', variables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { base: ['Duplicate variable name: A'] } }]);
    res = await t.request({ method: 'POST', url: `${base()}/pipeline`, token: p.ownerToken, payload: { ref: 'main', variables: [{ key: 'A', value: '1', variable_type: 'bogus' }] } });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'variables does not have a valid value' }]);
    res = await t.request({ method: 'POST', url: `${base()}/pipeline`, token: p.ownerToken, payload: { ref: 'main', variables: 'nope' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(await t.db.selectFrom('ci_pipelines').select('id').execute(), before);
  });

  it('cancels the running and pending jobs of a pipeline (200), and a runner report afterwards changes nothing', async () => {
    const pipeline = await create({ ref: 'main' });
    const job = await runner.requestJob();
    const res = await action(pipeline.id, 'cancel');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'canceled');
    assert.deepEqual(await jobStatuses(t, p, pipeline.id), { build: 'canceled', test: 'canceled' });
    const update = await runner.update(job, 'success');
    assert.equal(update.headers['job-status'], 'canceled');
    assert.deepEqual(await jobStatuses(t, p, pipeline.id), { build: 'canceled', test: 'canceled' });
    // Cancelling again is harmless.
    assert.equal((await action(pipeline.id, 'cancel')).json().status, 'canceled');
  });

  it('retries failed and canceled jobs (201), reopening the skipped ones', async () => {
    const pipeline = await create({ ref: 'main' });
    await runner.run('failed');
    assert.deepEqual(await jobStatuses(t, p, pipeline.id), { build: 'failed', test: 'skipped' });
    const res = await action(pipeline.id, 'retry', developerToken);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'pending');
    assert.deepEqual(await jobStatuses(t, p, pipeline.id), { build: 'pending', test: 'created' });
    const builds = await t.db.selectFrom('ci_builds').select(['name', 'status', 'retried']).where('pipeline_id', '=', pipeline.id).orderBy('id').execute();
    assert.deepEqual(builds.map((b) => [b.name, b.status, b.retried]), [['build', 'failed', 1], ['test', 'created', 0], ['build', 'pending', 0]]);
    // Both jobs canceled, then two retries at once: each job is cloned by one of them only.
    await action(pipeline.id, 'cancel');
    const both = await Promise.all([action(pipeline.id, 'retry'), action(pipeline.id, 'retry')]);
    assert.deepEqual(both.map((r) => r.statusCode), [201, 201]);
    const latest = await t.db.selectFrom('ci_builds').select(['name', 'status']).where('pipeline_id', '=', pipeline.id).where('retried', '=', 0).orderBy('id').execute();
    assert.deepEqual(latest.map((b) => [b.name, b.status]), [['build', 'pending'], ['test', 'created']]);
    assert.equal((await t.db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipeline.id).execute()).length, 5, 'two tries of build before, one of test, and one new of each');
    await runner.run('success');
    await runner.run('success');
    const shown = await t.request({ method: 'GET', url: `${base()}/pipelines/${pipeline.id}`, token: p.ownerToken });
    assert.equal(shown.json().status, 'success');
    // Nothing left to retry: the pipeline is answered as it is.
    const again = await action(pipeline.id, 'retry');
    assert.deepEqual([again.statusCode, again.json().status], [201, 'success']);
  });

  it('shows the latest pipeline of the head commit of a branch, 403 when there is none', async () => {
    const first = await create({ ref: 'feature' });
    const second = await create({ ref: 'feature' });
    await action(first.id, 'cancel');
    await action(second.id, 'cancel');
    let res = await t.request({ method: 'GET', url: `${base()}/pipelines/latest?ref=feature`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().id, second.id);
    assert.ok(res.json().detailed_status);
    res = await t.request({ method: 'GET', url: `${base()}/pipelines/latest`, token: p.ownerToken });
    assert.equal(res.json().ref, 'main');
    // A new commit on the branch: no pipeline has run for it yet.
    await pushFiles(t, p, { 'more.txt': 'm' }, { branch: 'feature' });
    res = await t.request({ method: 'GET', url: `${base()}/pipelines/latest?ref=feature`, token: p.ownerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'GET', url: `${base()}/pipelines/latest?ref=no-such-branch`, token: p.ownerToken });
    assert.equal(res.statusCode, 403);
  });

  it('deletes a pipeline as an owner only, with its jobs, variables and logs', async () => {
    const pipeline = await create({ ref: 'main', variables: [{ key: 'GONE', value: 'soon' }] });
    const job = await runner.run('success');
    const trace = path.join(t.dataDir, 'ci', 'traces', String(p.project.id), `${job.id}.log`);
    assert.ok(fs.existsSync(trace));
    let res = await t.request({ method: 'DELETE', url: `${base()}/pipelines/${pipeline.id}`, token: developerToken });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
    res = await t.request({ method: 'DELETE', url: `${base()}/pipelines/${pipeline.id}`, token: p.ownerToken, headers: { 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    assert.equal(res.statusCode, 412);
    res = await t.request({ method: 'DELETE', url: `${base()}/pipelines/${pipeline.id}`, token: p.ownerToken });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(await t.db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipeline.id).executeTakeFirst(), undefined);
    assert.equal(await t.db.selectFrom('ci_pipeline_variables').select('id').where('pipeline_id', '=', pipeline.id).executeTakeFirst(), undefined);
    assert.ok(!fs.existsSync(trace));
    for (const [method, url] of [['GET', `${base()}/pipelines/${pipeline.id}`], ['DELETE', `${base()}/pipelines/${pipeline.id}`], ['POST', `${base()}/pipelines/${pipeline.id}/cancel`], ['POST', `${base()}/pipelines/2147483648/retry`], ['GET', `${base()}/pipelines/99999999999/variables`]] as const) {
      res = await t.request({ method, url, token: p.ownerToken });
      assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }], `${method} ${url}`);
    }
  });

  it('loses no transition when a cancel races a runner reporting success', async () => {
    for (let i = 0; i < 5; i++) {
      const pipeline = await create({ ref: 'main' });
      const job = await runner.requestJob();
      const [cancel, update] = await Promise.all([action(pipeline.id, 'cancel'), runner.update(job, 'success')]);
      assert.equal(cancel.statusCode, 200);
      // A runner reporting on a job that was canceled first is refused, as the Service refuses it.
      assert.ok([200, 403].includes(update.statusCode), String(update.statusCode));
      const rows = await t.db.selectFrom('ci_builds').select(['name', 'status', 'allow_failure']).where('pipeline_id', '=', pipeline.id).where('retried', '=', 0).execute();
      const build = rows.find((r) => r.name === 'build')!;
      assert.ok(['success', 'canceled'].includes(build.status), build.status);
      // Whichever won, the pipeline's status is the one its jobs give, and nothing is left to run.
      const shown = await t.request({ method: 'GET', url: `${base()}/pipelines/${pipeline.id}`, token: p.ownerToken });
      assert.equal(shown.json().status, compositeStatus(rows));
      const left = await action(pipeline.id, 'cancel');
      assert.equal(left.json().status, 'canceled');
    }
    assert.equal(await runner.request(), null);
  });
});
