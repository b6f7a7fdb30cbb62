/**
 * Commit statuses (issue 30, item 4; lib/api/commit_statuses.rb of the Service 15.2, and
 * python-gitlab's test_create_commit_status): external statuses stored as jobs of a pipeline of
 * source `external`, so the commit's last pipeline, the pipelines list and the pipeline's status
 * show them; state transitions and their refusals, retried older statuses, filters, validation
 * and permissions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

describe('commit statuses API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  const shas: Record<string, string> = {};

  const commit = async (name: string, branch = 'main', extra: Record<string, unknown> = {}) => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch, commit_message: name, actions: [{ action: 'create', file_path: `${name}.txt`, content: name }], ...extra },
    });
    assert.equal(res.statusCode, 201, res.body);
    shas[name] = res.json().id as string;
  };
  const post = (sha: string, payload: Record<string, unknown>, token = people.tokens.developer) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${project}/statuses/${sha}`, token, payload });
  const list = (sha: string, query = '', token = people.tokens.reporter) =>
    t.request({ url: `/api/v4/projects/${project}/repository/commits/${sha}/statuses${query}`, token });

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    await commit('first');
    await commit('second');
  });
  after(async () => { await t.close(); });

  it('stores a status in a new external pipeline that the commit and the pipelines list show', async () => {
    const res = await post(shas.first, {
      state: 'success', target_url: 'https://ci.example.com/builds/1', description: 'all green', coverage: 87.5,
    });
    assert.equal(res.statusCode, 201, res.body);
    const s = res.json();
    assert.deepEqual(Object.keys(s), [
      'id', 'sha', 'ref', 'status', 'name', 'target_url', 'description', 'created_at', 'started_at', 'finished_at',
      'allow_failure', 'coverage', 'author',
    ]);
    assert.deepEqual(
      [s.sha, s.ref, s.status, s.name, s.target_url, s.description, s.started_at, s.allow_failure, s.coverage, s.author.username],
      [shas.first, 'main', 'success', 'default', 'https://ci.example.com/builds/1', 'all green', null, false, 87.5,
        people.users.developer.username],
    );
    assert.ok(s.finished_at);
    const listed = await list(shas.first);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(listed.json().map((x: { id: number }) => x.id), [s.id]);

    const detail = (await t.request({ url: `/api/v4/projects/${project}/repository/commits/${shas.first}`, token: people.tokens.reporter })).json();
    assert.equal(detail.status, 'success');
    assert.equal(detail.last_pipeline.source, 'external');
    assert.equal(detail.last_pipeline.sha, shas.first);
    const pipelines = (await t.request({ url: `/api/v4/projects/${project}/pipelines?source=external`, token: people.tokens.reporter })).json();
    assert.deepEqual(pipelines.map((p: { id: number; status: string; ref: string }) => [p.id, p.status, p.ref]),
      [[detail.last_pipeline.id, 'success', 'main']]);
    // An external status is no job a runner runs: the pipeline's jobs list does not show it.
    const jobs = await t.request({ url: `/api/v4/projects/${project}/pipelines/${detail.last_pipeline.id}/jobs`, token: people.tokens.reporter });
    assert.deepEqual(jobs.json(), []);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${project}/jobs/${s.id}`, token: people.tokens.reporter })).json(),
      { message: '404 Not found' });
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${project}/jobs`, token: people.tokens.reporter })).json(), []);
  });

  it('moves an open status on, refuses transitions that do not apply, and retries older statuses', async () => {
    const pending = await post(shas.second, { state: 'pending', context: 'lint' });
    assert.equal(pending.statusCode, 201, pending.body);
    assert.equal(pending.json().name, 'lint');
    const again = await post(shas.second, { state: 'pending', name: 'lint' });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: 'Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via "enqueue")' });
    const running = await post(shas.second, { state: 'running', name: 'lint' });
    assert.equal(running.statusCode, 201, running.body);
    assert.equal(running.json().id, pending.json().id);
    assert.ok(running.json().started_at);
    const twice = await post(shas.second, { state: 'running', name: 'lint' });
    assert.deepEqual(twice.json(), { message: 'Cannot transition status via :run from :running (Reason(s): Status cannot transition via "run")' });
    const pipeline = async () => (await t.request({
      url: `/api/v4/projects/${project}/repository/commits/${shas.second}`, token: people.tokens.reporter,
    })).json().last_pipeline;
    assert.equal((await pipeline()).status, 'running');

    const failed = await post(shas.second, { state: 'failed', name: 'lint' });
    assert.equal(failed.json().id, pending.json().id);
    assert.equal(failed.json().status, 'failed');
    assert.equal((await pipeline()).status, 'failed');
    // A new report of the same name after it ended is a new status; the old one is retried.
    const fixed = await post(shas.second, { state: 'success', name: 'lint' });
    assert.notEqual(fixed.json().id, pending.json().id);
    assert.equal((await pipeline()).status, 'success');
    assert.deepEqual((await list(shas.second)).json().map((x: { id: number }) => x.id), [fixed.json().id]);
    assert.deepEqual((await list(shas.second, '?all=true')).json().map((x: { id: number }) => x.id), [pending.json().id, fixed.json().id]);
    const canceled = await post(shas.second, { state: 'canceled', name: 'other', ref: 'main' });
    assert.equal(canceled.json().status, 'canceled');
    // Filters.
    assert.deepEqual((await list(shas.second, '?name=other')).json().map((x: { id: number }) => x.id), [canceled.json().id]);
    assert.deepEqual((await list(shas.second, '?stage=external&ref=main')).json().length, 2);
    assert.deepEqual((await list(shas.second, '?ref=nope')).json(), []);
    // The list compares the commit id as given: a branch name names the commit but no pipeline.
    assert.deepEqual((await list('main')).json(), []);
  });

  it('joins the pipeline named by pipeline_id and the ref given', async () => {
    const first = (await t.request({ url: `/api/v4/projects/${project}/repository/commits/${shas.first}`, token: people.tokens.reporter })).json();
    const res = await post(shas.first, { state: 'running', name: 'deploy', pipeline_id: first.last_pipeline.id });
    assert.equal(res.statusCode, 201, res.body);
    const statuses = (await list(shas.first)).json();
    assert.deepEqual(statuses.map((x: { name: string }) => x.name), ['default', 'deploy']);
    const pipeline = (await t.request({ url: `/api/v4/projects/${project}/pipelines/${first.last_pipeline.id}`, token: people.tokens.reporter })).json();
    assert.equal(pipeline.status, 'running');
    // Another ref: a pipeline of its own.
    const other = await post(shas.first, { state: 'success', ref: 'elsewhere' });
    assert.equal(other.json().ref, 'elsewhere');
    const pipelines = (await t.request({ url: `/api/v4/projects/${project}/pipelines?sha=${shas.first}`, token: people.tokens.reporter })).json();
    assert.equal(pipelines.length, 2);
  });

  it('answers bad input and unknown commits and refs as the Service does', async () => {
    assert.deepEqual((await post(shas.first, { state: 'done' })).json(), { error: 'state does not have a valid value' });
    assert.deepEqual((await post(shas.first, {})).json(), { message: '400 Bad request - "state" not given' });
    const badUrl = await post(shas.first, { state: 'success', target_url: 'ftp://example.com/x' });
    assert.equal(badUrl.statusCode, 400);
    assert.deepEqual(badUrl.json(), { message: { target_url: ['is blocked: Only allowed schemes are http, https'] } });
    assert.deepEqual((await post(shas.first, { state: 'success', target_url: 'not a url' })).json(),
      { message: { target_url: ['is blocked: URI is invalid'] } });
    assert.deepEqual((await post(shas.first, { state: 'success', name: ' ' })).json(), { message: { name: ["can't be blank"] } });
    assert.deepEqual((await post('f'.repeat(40), { state: 'success' })).json(), { message: '404 Commit Not Found' });
    assert.deepEqual((await list('f'.repeat(40))).json(), { message: '404 Commit Not Found' });
    // A commit no branch contains, with no ref and no pipeline: nowhere to put the status.
    await commit('orphan', 'tmp', { start_branch: 'main' });
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${project}/repository/branches/tmp`, token: people.tokens.owner });
    assert.equal(del.statusCode, 204, del.body);
    assert.deepEqual((await post(shas.orphan, { state: 'success' })).json(), { message: '404 References for commit Not Found' });
  });

  it('lets Developers report and Reporters read', async () => {
    assert.equal((await post(shas.first, { state: 'success' }, people.tokens.reporter)).statusCode, 403);
    assert.equal((await post(shas.first, { state: 'success' }, people.tokens.nonMember)).statusCode, 404);
    assert.equal((await list(shas.first, '', people.tokens.guest)).statusCode, 403);
    assert.equal((await list(shas.first, '', people.tokens.nonMember)).statusCode, 404);
    const anonymous = await t.request({ url: `/api/v4/projects/${project}/repository/commits/${shas.first}/statuses` });
    assert.equal(anonymous.statusCode, 401);
  });
});
