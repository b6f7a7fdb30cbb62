/**
 * Who sees and changes which runners through GraphQL, against REST: `Query.runners` is the Service
 * 15.2's administrators' list (REST GET /runners/all), anyone else gets an empty connection (REST
 * GET /runners, the caller's own runners, has no GraphQL counterpart); `runner(id)`,
 * `runnerUpdate` and `runnerDelete` take the runner's owners (Maintainers of a project runner's
 * project), the rule REST's PUT/DELETE /runners/:id use.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const NOT_AVAILABLE = "The resource that you are attempting to access does not exist or you don't have permission to perform this action";

describe('GraphQL API: runners, as the Service 15.2 and REST agree', () => {
  let t: TestApp;
  let maintainer: UserRow;
  let p: CiProject;
  let projectRunner: TestRunner;
  let instanceRunner: TestRunner;
  const tokens: Record<string, string> = {};

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    maintainer = await createUser(t.db);
    tokens.maintainer = await createToken(t.db, maintainer, { scopes: ['api'] });
    p = await createCiProject(t, { owner: maintainer });
    const developer = await createUser(t.db);
    tokens.developer = await createToken(t.db, developer, { scopes: ['api'] });
    const added = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: tokens.maintainer, payload: { user_id: developer.id, access_level: 30 } });
    assert.equal(added.statusCode, 201, added.body);
    tokens.stranger = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
    instanceRunner = await TestRunner.register(t, { description: 'instance' });
    const reset = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/runners/reset_registration_token`, token: tokens.maintainer });
    assert.equal(reset.statusCode, 201, reset.body);
    const reg = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: reset.json().token, description: 'project', info: { name: 'test-runner', version: '15.2.0' } } });
    assert.equal(reg.statusCode, 201, reg.body);
    projectRunner = new TestRunner(t, reg.json().id, reg.json().token);
  });
  after(async () => { await t.close(); });

  const gql = (query: string, token: string | null) => t.request({ method: 'POST', url: '/api/graphql', ...(token ? { token } : {}), payload: { query } });
  const data = async (query: string, token: string | null) => {
    const res = await gql(query, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().errors, undefined, res.body);
    return res.json().data;
  };
  const gid = (id: number) => `gid://gitlab/Ci::Runner/${id}`;
  const RUNNERS = '{ runners { count nodes { id runnerType } } }';

  it('lists every runner to administrators, as GET /runners/all', async () => {
    const listed = (await data(RUNNERS, ROOT_TOKEN)).runners;
    const all = await t.request({ url: '/api/v4/runners/all', token: ROOT_TOKEN });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(listed.nodes.map((n: { id: string }) => n.id).sort(), all.json().map((r: { id: number }) => gid(r.id)).sort());
    assert.equal(listed.count, 2);
    const byType = await data('{ runners(type: PROJECT_TYPE) { nodes { id } } }', ROOT_TOKEN);
    assert.deepEqual(byType.runners.nodes, [{ id: gid(projectRunner.id) }]);
  });

  it('lists nothing to anyone else, even the owner of a project runner REST lists under GET /runners', async () => {
    const own = await t.request({ url: '/api/v4/runners', token: tokens.maintainer });
    assert.deepEqual(own.json().map((r: { id: number }) => r.id), [projectRunner.id]);
    for (const token of [tokens.maintainer!, tokens.developer!, tokens.stranger!, null]) {
      assert.deepEqual(await data(RUNNERS, token), { runners: { count: 0, nodes: [] } });
    }
    // Non-administrators are refused GET /runners/all in REST.
    assert.equal((await t.request({ url: '/api/v4/runners/all', token: tokens.maintainer })).statusCode, 403);
  });

  it('shows one runner to its owners only', async () => {
    const one = (id: number) => `{ runner(id: "${gid(id)}") { id description runnerType } }`;
    assert.deepEqual(await data(one(projectRunner.id), tokens.maintainer!), { runner: { id: gid(projectRunner.id), description: 'project', runnerType: 'PROJECT_TYPE' } });
    for (const token of [tokens.developer!, tokens.stranger!, null]) assert.deepEqual(await data(one(projectRunner.id), token), { runner: null });
    assert.deepEqual(await data(one(instanceRunner.id), tokens.maintainer!), { runner: null });
    assert.equal((await data(one(instanceRunner.id), ROOT_TOKEN)).runner.description, 'instance');
  });

  it('lets a project runner\'s owners update and delete it, and refuses others as REST does', async () => {
    const update = `mutation { runnerUpdate(input: { id: "${gid(projectRunner.id)}", description: "renamed" }) { runner { description } errors } }`;
    for (const token of [tokens.developer!, tokens.stranger!]) {
      const refused = await gql(update, token);
      assert.deepEqual([refused.json().data, refused.json().errors?.[0]?.message], [{ runnerUpdate: null }, NOT_AVAILABLE]);
      const rest = await t.request({ method: 'PUT', url: `/api/v4/runners/${projectRunner.id}`, token, payload: { description: 'renamed' } });
      assert.equal(rest.statusCode, 403);
    }
    assert.equal((await t.request({ url: `/api/v4/runners/${projectRunner.id}`, token: ROOT_TOKEN })).json().description, 'project', 'a refused update changes nothing');
    assert.deepEqual((await data(update, tokens.maintainer!)).runnerUpdate, { runner: { description: 'renamed' }, errors: [] });

    const del = `mutation { runnerDelete(input: { id: "${gid(projectRunner.id)}" }) { errors } }`;
    const refused = await gql(del, tokens.stranger!);
    assert.equal(refused.json().errors[0].message, NOT_AVAILABLE);
    assert.deepEqual((await data(del, tokens.maintainer!)).runnerDelete, { errors: [] });
    assert.equal((await t.request({ url: `/api/v4/runners/${projectRunner.id}`, token: ROOT_TOKEN })).statusCode, 404);
    // Instance runners stay the administrators' to change ("Runner is shared" in REST).
    const shared = await gql(`mutation { runnerUpdate(input: { id: "${gid(instanceRunner.id)}", description: "x" }) { errors } }`, tokens.maintainer!);
    assert.equal(shared.json().errors[0].message, NOT_AVAILABLE);
  });
});
