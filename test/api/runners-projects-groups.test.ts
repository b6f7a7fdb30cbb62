/**
 * Project and group runners (issue 16, item 2): registration with a project's or group's
 * registration token, the jobs each may take, GET/POST /projects/:id/runners,
 * DELETE /projects/:id/runners/:runner_id, GET /groups/:id/runners, GET /runners for owners,
 * GET/PUT/DELETE /runners/:id and GET /runners/:id/jobs with their permissions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { TestRunner } from '../helpers/test-runner.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';

const CONFIG = { '.gitlab-ci.yml': 'build:\n  script: make\n' };

describe('project and group runners', () => {
  let t: TestApp;
  let maintainer: UserRow;
  let maintainerToken: string;
  let a: CiProject;
  let b: CiProject;
  let strangerToken: string;
  let developerToken: string;

  before(async () => {
    t = await startTestApp();
    maintainer = await createUser(t.db);
    maintainerToken = await createToken(t.db, maintainer);
    a = await createCiProject(t, { owner: maintainer });
    b = await createCiProject(t);
    for (const p of [a, b]) await pushFiles(t, p, CONFIG);
    strangerToken = await createToken(t.db, await createUser(t.db));
    const developer = await createUser(t.db);
    developerToken = await createToken(t.db, developer);
    await t.request({ method: 'POST', url: `/api/v4/projects/${a.project.id}/members`, token: maintainerToken, payload: { user_id: developer.id, access_level: 30 } });
  });
  after(async () => { await t.close(); });

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });

  async function register(token: string, extra: object = {}): Promise<TestRunner> {
    const res = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token, description: 'r', info: { name: 'test-runner', version: '15.2.0' }, ...extra } });
    assert.equal(res.statusCode, 201, res.body);
    return new TestRunner(t, res.json().id, res.json().token);
  }

  let projectRunner: TestRunner;

  it('registers a project runner with the project\'s token, which takes only that project\'s jobs', async () => {
    assert.equal((await api('POST', `/projects/${a.project.id}/runners/reset_registration_token`, developerToken)).statusCode, 403);
    const reset = await api('POST', `/projects/${a.project.id}/runners/reset_registration_token`, maintainerToken);
    assert.equal(reset.statusCode, 201);
    assert.match(reset.json().token, /^GR1348941/);
    const stored = await t.db.selectFrom('ci_runner_registration_tokens').selectAll().execute();
    assert.ok(stored.every((r) => r.token_digest !== reset.json().token));
    projectRunner = await register(reset.json().token);
    const row = await t.db.selectFrom('ci_runners').selectAll().where('id', '=', projectRunner.id).executeTakeFirstOrThrow();
    assert.equal(row.runner_type, 'project_type');

    // A new token replaces the old one at once.
    const again = await api('POST', `/projects/${a.project.id}/runners/reset_registration_token`, maintainerToken);
    const old = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: reset.json().token } });
    assert.equal(old.statusCode, 403);
    assert.notEqual(again.json().token, reset.json().token);

    // B's pipeline is older, but the runner of A only sees A's job.
    await createPipeline(t, b);
    const pipelineA = await createPipeline(t, a);
    const job = await projectRunner.requestJob();
    assert.equal(job.job_info.project_id, a.project.id);
    assert.equal((await t.db.selectFrom('ci_builds').select('pipeline_id').where('id', '=', job.id).executeTakeFirstOrThrow()).pipeline_id, pipelineA.id);
    assert.equal(await projectRunner.request(), null);
    assert.equal((await projectRunner.update(job, 'success')).statusCode, 200);
  });

  it('shows a project runner to its maintainers only, and lists it where it belongs', async () => {
    const shown = await api('GET', `/runners/${projectRunner.id}`, maintainerToken);
    assert.equal(shown.statusCode, 200);
    assert.equal(shown.json().runner_type, 'project_type');
    assert.equal(shown.json().is_shared, false);
    assert.deepEqual(shown.json().projects.map((p: { id: number }) => p.id), [a.project.id]);
    assert.equal(shown.json().projects[0].path_with_namespace, a.fullPath);
    const denied = await api('GET', `/runners/${projectRunner.id}`, strangerToken);
    assert.deepEqual([denied.statusCode, denied.json()], [403, { message: '403 Forbidden - No access granted' }]);
    assert.deepEqual((await api('GET', '/runners', maintainerToken)).json().map((r: { id: number }) => r.id), [projectRunner.id]);
    assert.deepEqual((await api('GET', '/runners', strangerToken)).json(), []);

    const list = await api('GET', `/projects/${a.project.id}/runners`, maintainerToken);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((r: { id: number }) => r.id), [projectRunner.id]);
    assert.equal((await api('GET', `/projects/${a.project.id}/runners`, developerToken)).statusCode, 403);
    assert.deepEqual((await api('GET', `/projects/${b.project.id}/runners`, b.ownerToken)).json(), []);
  });

  it('lists a runner\'s jobs with their project to those who may administer it', async () => {
    const jobs = await api('GET', `/runners/${projectRunner.id}/jobs`, maintainerToken);
    assert.equal(jobs.statusCode, 200);
    assert.equal(jobs.json().length, 1);
    assert.equal(jobs.json()[0].project.id, a.project.id);
    assert.equal(jobs.json()[0].status, 'success');
    assert.deepEqual((await api('GET', `/runners/${projectRunner.id}/jobs?status=failed`, maintainerToken)).json(), []);
    assert.equal((await api('GET', `/runners/${projectRunner.id}/jobs`, strangerToken)).statusCode, 403);
    assert.equal((await api('GET', `/runners/${projectRunner.id}/jobs`, ROOT_TOKEN)).json().length, 1);
    assert.equal((await api('GET', '/runners/999999/jobs', ROOT_TOKEN)).statusCode, 404);
  });

  it('enables a project runner for another project and disables it again; the last project stays', async () => {
    const c = await createCiProject(t, { owner: maintainer });
    const enable = await api('POST', `/projects/${c.project.id}/runners`, maintainerToken, { runner_id: projectRunner.id });
    assert.equal(enable.statusCode, 201, enable.body);
    assert.equal(enable.json().id, projectRunner.id);
    const twice = await api('POST', `/projects/${c.project.id}/runners`, maintainerToken, { runner_id: projectRunner.id });
    assert.deepEqual([twice.statusCode, twice.json()], [400, { message: { runner_id: ['has already been taken'] } }]);
    // Someone who maintains B but not the runner's projects may not take it.
    assert.deepEqual((await api('POST', `/projects/${b.project.id}/runners`, b.ownerToken, { runner_id: projectRunner.id })).json(),
      { message: '403 Forbidden - No access granted' });
    const shared = await api('DELETE', `/runners/${projectRunner.id}`, maintainerToken);
    assert.deepEqual([shared.statusCode, shared.json()], [403, { message: '403 Forbidden - Runner associated with more than one project' }]);
    assert.equal((await api('DELETE', `/projects/${c.project.id}/runners/${projectRunner.id}`, maintainerToken)).statusCode, 204);
    const last = await api('DELETE', `/projects/${a.project.id}/runners/${projectRunner.id}`, maintainerToken);
    assert.deepEqual([last.statusCode, last.json()], [403, { message: '403 Forbidden - Only one project associated with the runner. Please remove the runner instead' }]);
    assert.equal((await api('DELETE', `/projects/${c.project.id}/runners/${projectRunner.id}`, maintainerToken)).statusCode, 404);
    await t.db.updateTable('ci_runners').set({ locked: 1 }).where('id', '=', projectRunner.id).execute();
    assert.deepEqual((await api('POST', `/projects/${c.project.id}/runners`, maintainerToken, { runner_id: projectRunner.id })).json(),
      { message: '403 Forbidden - Runner is locked' });
  });

  it('updates and deletes a project runner as its maintainer', async () => {
    const put = await api('PUT', `/runners/${projectRunner.id}`, maintainerToken, { paused: true, description: 'mine' });
    assert.equal(put.statusCode, 200);
    assert.deepEqual([put.json().paused, put.json().description], [true, 'mine']);
    assert.equal((await api('PUT', `/runners/${projectRunner.id}`, strangerToken, { paused: false })).statusCode, 403);
    assert.equal((await api('DELETE', `/runners/${projectRunner.id}`, strangerToken)).statusCode, 403);
    assert.equal((await api('DELETE', `/runners/${projectRunner.id}`, maintainerToken)).statusCode, 204);
    assert.equal((await api('GET', `/runners/${projectRunner.id}`, maintainerToken)).statusCode, 404);
  });

  it('registers a group runner with the group\'s token; it takes the jobs of the group\'s projects and subgroups', async () => {
    const owner = await createUser(t.db);
    const ownerToken = await createToken(t.db, owner);
    const group = (await api('POST', '/groups', ownerToken, { name: 'Runners Group', path: 'runners-group' })).json();
    const sub = (await api('POST', '/groups', ownerToken, { name: 'Sub', path: 'sub', parent_id: group.id })).json();
    const res = await api('POST', '/projects', ownerToken, { name: 'In sub', namespace_id: sub.id });
    assert.equal(res.statusCode, 201, res.body);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    const inSub: CiProject = {
      project: row, owner, ownerToken, fullPath: res.json().path_with_namespace,
      gitDir: repositoryPath(t.config.storages, row.repository_storage, row.disk_path),
    };
    await pushFiles(t, inSub, CONFIG);

    assert.equal((await api('POST', `/groups/${group.id}/runners/reset_registration_token`, maintainerToken)).statusCode, 404);
    const token = (await api('POST', `/groups/${group.id}/runners/reset_registration_token`, ownerToken)).json().token;
    const groupRunner = await register(token);
    await createPipeline(t, b);
    await createPipeline(t, inSub);
    const job = await groupRunner.requestJob();
    assert.equal(job.job_info.project_id, inSub.project.id);

    const shown = (await api('GET', `/runners/${groupRunner.id}`, ownerToken)).json();
    assert.equal(shown.runner_type, 'group_type');
    assert.deepEqual(shown.groups, [{ id: group.id, name: 'Runners Group', web_url: `http://kiln.test/groups/runners-group` }]);
    assert.deepEqual((await api('GET', `/groups/${group.id}/runners`, ownerToken)).json().map((r: { id: number }) => r.id), [groupRunner.id]);
    assert.deepEqual((await api('GET', `/groups/${group.id}/runners?type=project_type`, ownerToken)).json(), []);
    assert.deepEqual((await api('GET', `/groups/${sub.id}/runners`, ownerToken)).json(), []);
    assert.deepEqual((await api('GET', '/runners?type=group_type', ownerToken)).json().map((r: { id: number }) => r.id), [groupRunner.id]);
    assert.equal((await api('GET', `/runners/${groupRunner.id}`, maintainerToken)).statusCode, 403);
    // A group runner cannot be enabled for a project.
    assert.deepEqual((await api('POST', `/projects/${inSub.project.id}/runners`, ownerToken, { runner_id: groupRunner.id })).json(),
      { message: '403 Forbidden - Runner is a group runner' });
    // Projects of the group list their group's runners.
    assert.deepEqual((await api('GET', `/projects/${inSub.project.id}/runners`, ownerToken)).json().map((r: { id: number }) => r.id), [groupRunner.id]);
  });
});
