/**
 * The GraphQL pipeline mutations (issue 18 item 3): `pipelineCancel`, `pipelineRetry` and
 * `pipelineDestroy` as the Service 15.2 defines them, under the REST routes' permissions (cancel
 * and retry for Developers, destroy for the Owner), with api-scoped credentials only, and their
 * effects checked through the REST API afterwards.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createSession, createToken, createUser } from '../helpers/factories.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { createCiProject, createPipeline, jobStatuses, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const CONFIG = `
build: {stage: build, script: x}
test: {stage: test, script: x}
`;

const NOT_AVAILABLE = "The resource that you are attempting to access does not exist or you don't have permission to perform this action";

const CANCEL = 'mutation($id: CiPipelineID!, $cid: String) { pipelineCancel(input: { id: $id, clientMutationId: $cid }) { clientMutationId errors } }';
const RETRY = 'mutation($id: CiPipelineID!) { pipelineRetry(input: { id: $id }) { errors pipeline { id status retryable cancelable jobs { nodes { name status } } } } }';
const DESTROY = 'mutation($id: CiPipelineID!) { pipelineDestroy(input: { id: $id }) { clientMutationId errors } }';

const gid = (id: number) => `gid://gitlab/Ci::Pipeline/${id}`;

describe('GraphQL API: pipelineCancel, pipelineRetry, pipelineDestroy', () => {
  let t: TestApp;
  let p: CiProject;
  let runner: TestRunner;
  const tokens: Record<string, string> = {};
  const users: Record<string, UserRow> = {};

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG });
    runner = await TestRunner.register(t);
    for (const [role, level] of [['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
      users[role] = await createUser(t.db);
      tokens[role] = await createToken(t.db, users[role], { scopes: ['api'] });
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: users[role].id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
    }
    tokens.readApi = await createToken(t.db, users.developer!, { scopes: ['read_api'] });
    tokens.stranger = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  const gql = (query: string, token: string | null, variables: object) => t.request({
    method: 'POST', url: '/api/graphql', ...(token ? { token } : {}), payload: { query, variables },
  });
  const data = async (query: string, token: string, variables: object) => {
    const res = await gql(query, token, variables);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().errors, undefined, res.body);
    return res.json().data;
  };
  /** The Service's answer to a caller who may not act: a null field and one top-level error on its path. */
  const assertRefused = async (query: string, field: string, token: string | null, variables: object) => {
    const res = await gql(query, token, variables);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().data, { [field]: null }, res.body);
    assert.equal(res.json().errors.length, 1);
    assert.equal(res.json().errors[0].message, NOT_AVAILABLE);
    assert.deepEqual(res.json().errors[0].path, [field]);
  };
  const restPipeline = (project: CiProject, id: number, token = project.ownerToken) =>
    t.request({ method: 'GET', url: `/api/v4/projects/${project.project.id}/pipelines/${id}`, token });

  it('cancels a pipeline for Developers with an api token, refusing reporters, read_api tokens, strangers and anonymous callers', async () => {
    const { id } = await createPipeline(t, p);
    const vars = { id: gid(id), cid: 'cancel-1' };
    for (const token of [tokens.reporter!, tokens.readApi!, tokens.stranger!, null]) await assertRefused(CANCEL, 'pipelineCancel', token, vars);
    assert.equal((await restPipeline(p, id)).json().status, 'pending', 'a refused cancel changes nothing');

    const canceled = await data(CANCEL, tokens.developer!, vars);
    assert.deepEqual(canceled.pipelineCancel, { clientMutationId: 'cancel-1', errors: [] });
    const shown = await restPipeline(p, id);
    assert.equal(shown.json().status, 'canceled');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'canceled', test: 'canceled' });
    // Nothing left to cancel: Mutations::Ci::Pipeline::Cancel's payload error, no top-level error.
    assert.deepEqual((await data(CANCEL, tokens.developer!, { id: gid(id) })).pipelineCancel, { clientMutationId: null, errors: ['Pipeline is not cancelable'] });
  });

  it('cancels through a signed-in session only with its CSRF token', async () => {
    const { id } = await createPipeline(t, p);
    const session = await createSession(t.db, users.developer!);
    const send = (headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/graphql', headers, payload: { query: CANCEL, variables: { id: gid(id) } } });
    // Without the token the session does not count (the Service's null_session): not available.
    const noCsrf = await send({ cookie: `_service_session=${session}` });
    assert.deepEqual([noCsrf.json().data, noCsrf.json().errors[0].message], [{ pipelineCancel: null }, NOT_AVAILABLE]);
    assert.equal((await restPipeline(p, id)).json().status, 'pending');
    const withCsrf = await send({ cookie: `_service_session=${session}`, 'x-csrf-token': csrfTokenFor(t.app.kiln.secretKeyBase, session) });
    assert.deepEqual(withCsrf.json(), { data: { pipelineCancel: { clientMutationId: null, errors: [] } } });
    assert.equal((await restPipeline(p, id)).json().status, 'canceled');
  });

  it('retries a failed pipeline\'s jobs for Developers and answers the pipeline as it now is', async () => {
    const { id } = await createPipeline(t, p);
    await runner.run('failed');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'failed', test: 'skipped' });
    for (const token of [tokens.reporter!, tokens.readApi!, tokens.stranger!, null]) await assertRefused(RETRY, 'pipelineRetry', token, { id: gid(id) });
    assert.equal((await restPipeline(p, id)).json().status, 'failed', 'a refused retry changes nothing');

    const retried = (await data(RETRY, tokens.developer!, { id: gid(id) })).pipelineRetry;
    const { jobs, ...rest } = retried.pipeline;
    assert.deepEqual([retried.errors, rest], [[], { id: gid(id), status: 'PENDING', retryable: false, cancelable: true }]);
    const byName = Object.fromEntries(jobs.nodes.map((j: { name: string; status: string }) => [j.name, j.status]));
    assert.deepEqual(byName, { build: 'PENDING', test: 'CREATED' });
    assert.equal((await restPipeline(p, id)).json().status, 'pending');
    assert.deepEqual(await jobStatuses(t, p, id), { build: 'pending', test: 'created' });
    const builds = await t.db.selectFrom('ci_builds').select(['name', 'retried', 'user_id']).where('pipeline_id', '=', id).where('name', '=', 'build').orderBy('id').execute();
    assert.deepEqual(builds.map((b) => [b.retried, b.user_id]), [[1, p.owner.id], [0, users.developer!.id]], 'the retry is the caller\'s');
    // Running it to the end leaves nothing to retry: the pipeline comes back unchanged, no errors.
    await runner.run('success');
    await runner.run('success');
    const again = await data(RETRY, tokens.developer!, { id: gid(id) });
    assert.deepEqual([again.pipelineRetry.errors, again.pipelineRetry.pipeline.status], [[], 'SUCCESS']);
    assert.equal((await restPipeline(p, id)).json().status, 'success');
  });

  it('destroys a pipeline for the Owner only, and it is gone from REST afterwards', async () => {
    const { id } = await createPipeline(t, p);
    const job = await runner.run('success');
    for (const token of [tokens.developer!, tokens.maintainer!, tokens.readApi!, tokens.stranger!, null]) await assertRefused(DESTROY, 'pipelineDestroy', token, { id: gid(id) });
    assert.equal((await restPipeline(p, id)).statusCode, 200, 'a refused destroy deletes nothing');

    const destroyed = await data(DESTROY, p.ownerToken, { id: gid(id) });
    assert.deepEqual(destroyed.pipelineDestroy, { clientMutationId: null, errors: [] });
    const gone = await restPipeline(p, id);
    assert.deepEqual([gone.statusCode, gone.json()], [404, { message: '404 Not found' }]);
    const jobRes = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}`, token: p.ownerToken });
    assert.equal(jobRes.statusCode, 404);
    // A pipeline that no longer exists is not available, as one the caller may not see.
    await assertRefused(DESTROY, 'pipelineDestroy', p.ownerToken, { id: gid(id) });
    await assertRefused(CANCEL, 'pipelineCancel', p.ownerToken, { id: gid(id) });
  });

  it('does not touch a pipeline of another user\'s private project, which an administrator may act on', async () => {
    const other = await createCiProject(t);
    await pushFiles(t, other, { '.gitlab-ci.yml': CONFIG });
    const { id } = await createPipeline(t, other);
    for (const [query, field] of [[CANCEL, 'pipelineCancel'], [RETRY, 'pipelineRetry'], [DESTROY, 'pipelineDestroy']] as const) {
      await assertRefused(query, field, p.ownerToken, { id: gid(id) });
    }
    const shown = await restPipeline(other, id);
    assert.deepEqual([shown.statusCode, shown.json().status], [200, 'pending']);
    assert.deepEqual(await jobStatuses(t, other, id), { build: 'pending', test: 'created' });
    // The same pipeline seen by its owner is there, unchanged; an administrator may cancel it.
    assert.deepEqual((await data(CANCEL, ROOT_TOKEN, { id: gid(id) })).pipelineCancel, { clientMutationId: null, errors: [] });
    assert.equal((await restPipeline(other, id)).json().status, 'canceled');
  });

  it('lets a public project\'s readers see its pipelines but not cancel them', async () => {
    const open = await createCiProject(t, { visibility: 'public' });
    await pushFiles(t, open, { '.gitlab-ci.yml': CONFIG });
    const { id } = await createPipeline(t, open);
    const seen = await data('query($id: CiPipelineID!, $path: ID!) { project(fullPath: $path) { pipeline(id: $id) { id cancelable } } }', tokens.stranger!, { id: gid(id), path: open.fullPath });
    assert.deepEqual(seen.project.pipeline, { id: gid(id), cancelable: true });
    await assertRefused(CANCEL, 'pipelineCancel', tokens.stranger!, { id: gid(id) });
    await assertRefused(RETRY, 'pipelineRetry', tokens.stranger!, { id: gid(id) });
    assert.equal((await restPipeline(open, id)).json().status, 'pending');
    assert.deepEqual((await data(CANCEL, open.ownerToken, { id: gid(id) })).pipelineCancel.errors, []);
  });

  it('answers a pipeline left with only a manual job as not cancelable, in the field and the mutation alike', async () => {
    const manual = await createCiProject(t);
    await pushFiles(t, manual, { '.gitlab-ci.yml': 'build: {stage: build, script: x}\ndeploy: {stage: deploy, script: x, when: manual}\n' });
    const { id } = await createPipeline(t, manual);
    await runner.run('success');
    assert.deepEqual(await jobStatuses(t, manual, id), { build: 'success', deploy: 'manual' });
    const status = (await restPipeline(manual, id)).json().status;
    const field = await data('query($id: CiPipelineID!, $path: ID!) { project(fullPath: $path) { pipeline(id: $id) { cancelable } } }', manual.ownerToken, { id: gid(id), path: manual.fullPath });
    assert.equal(field.project.pipeline.cancelable, false);
    assert.deepEqual((await data(CANCEL, manual.ownerToken, { id: gid(id) })).pipelineCancel.errors, ['Pipeline is not cancelable']);
    // Manual jobs stay playable: nothing changed.
    assert.deepEqual(await jobStatuses(t, manual, id), { build: 'success', deploy: 'manual' });
    assert.equal((await restPipeline(manual, id)).json().status, status);
  });

  it('keeps an archived project\'s pipelines as they are, as REST does, while its Owner may still destroy them', async () => {
    const old = await createCiProject(t);
    await pushFiles(t, old, { '.gitlab-ci.yml': CONFIG });
    const { id } = await createPipeline(t, old);
    await t.request({ method: 'POST', url: `/api/v4/projects/${old.project.id}/pipelines/${id}/cancel`, token: old.ownerToken });
    const archived = await t.request({ method: 'POST', url: `/api/v4/projects/${old.project.id}/archive`, token: old.ownerToken });
    assert.equal(archived.statusCode, 201, archived.body);
    await assertRefused(RETRY, 'pipelineRetry', old.ownerToken, { id: gid(id) });
    const rest = await t.request({ method: 'POST', url: `/api/v4/projects/${old.project.id}/pipelines/${id}/retry`, token: old.ownerToken });
    assert.equal(rest.statusCode, 403, 'the REST route refuses the same caller');
    assert.equal((await restPipeline(old, id)).json().status, 'canceled');
    assert.deepEqual((await data(DESTROY, old.ownerToken, { id: gid(id) })).pipelineDestroy.errors, []);
    assert.equal((await restPipeline(old, id)).statusCode, 404);
  });

  it('refuses ids that are not pipeline global ids with the Service\'s coercion messages', async () => {
    for (const [id, message] of [
      ['gid://gitlab/Ci::Build/1', '"gid://gitlab/Ci::Build/1" does not represent an instance of Ci::Pipeline'],
      ['gid://gitlab/Ci::Pipeline/2147483648', '"gid://gitlab/Ci::Pipeline/2147483648" is not a valid Global ID'],
      ['1', '"1" is not a valid Global ID'],
    ] as const) {
      const res = await gql(CANCEL, p.ownerToken, { id });
      assert.equal(res.json().data, undefined, res.body);
      assert.match(res.json().errors[0].message, new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), res.body);
    }
    await assertRefused(RETRY, 'pipelineRetry', p.ownerToken, { id: gid(2147483647) });
  });
});
