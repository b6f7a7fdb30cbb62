/**
 * A fork's merge request pipelines (issue 30; MergeRequests::CreatePipelineService of the Service
 * 15.2): run in the TARGET project when the one asking may run pipelines there — on the target's
 * refs/merge-requests/:iid/head, source merge_request_event, with the target's variables, picked
 * up by the target's runners — and otherwise in the fork on the source branch; the request's
 * pipeline list shows both; the kill switch flag keeps them in the fork.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { waitFor } from '../helpers/storage-shards.ts';
import { TestRunner } from '../helpers/test-runner.ts';

const run = promisify(execFile);
const gitEnv = {
  ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'C', GIT_AUTHOR_EMAIL: 'c@example.com', GIT_COMMITTER_NAME: 'C', GIT_COMMITTER_EMAIL: 'c@example.com',
};
const FLAG = 'ci_disallow_to_create_merge_request_pipelines_in_target_project';
const CI = [
  'test:',
  '  script: [echo hi]',
  '  rules:',
  '    - if: $CI_PIPELINE_SOURCE == "merge_request_event"',
  '',
].join('\n');

interface Pipeline { id: number; project_id: number; ref: string; sha: string; source: string; status: string; web_url: string }

describe("a fork's merge request pipelines", () => {
  let t: ListeningTestApp;
  let work: string;
  let ownerToken: string;
  let contribToken: string;
  let upstream: { id: number; path_with_namespace: string };
  let fork: { id: number; path_with_namespace: string };
  let runner: TestRunner;
  let iid: number;
  let head: string;

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });
  const runPipeline = (token: string) => api('POST', `/projects/${upstream.id}/merge_requests/${iid}/pipelines`, token);

  before(async () => {
    t = await startListeningApp({ KILN_JOB_POLL_MS: '20' });
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-forkpipe-'));
    ownerToken = await createToken(t.db, await createUser(t.db, { username: 'upowner' }));
    contribToken = await createToken(t.db, await createUser(t.db, { username: 'contrib' }));
    const r = await api('POST', '/projects', ownerToken, { name: 'up', visibility: 'public', initialize_with_readme: true });
    assert.equal(r.statusCode, 201, r.body);
    upstream = r.json();
    const f = await api('POST', `/projects/${upstream.id}/fork`, contribToken, {});
    assert.equal(f.statusCode, 201, f.body);
    fork = f.json();
    await waitFor('the fork', async () => {
      const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', fork.id).executeTakeFirstOrThrow();
      return row.import_status === 'finished' ? true : undefined;
    });
    for (const [id, token, key] of [[upstream.id, ownerToken, 'TARGET_ONLY'], [fork.id, contribToken, 'FORK_ONLY']] as const) {
      const v = await api('POST', `/projects/${id}/variables`, token, { key, value: `value of ${key}` });
      assert.equal(v.statusCode, 201, v.body);
    }
    // A runner of the target project only.
    const runnersToken = (await api('GET', `/projects/${upstream.id}`, ownerToken)).json().runners_token as string;
    const reg = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: runnersToken } });
    assert.equal(reg.statusCode, 201, reg.body);
    runner = new TestRunner(t, reg.json().id, reg.json().token);

    const clone = path.join(work, 'fork');
    const remote = `${t.url.replace('://', `://contrib:${contribToken}@`)}/${fork.path_with_namespace}.git`;
    await run('git', ['clone', '-q', remote, clone], { env: gitEnv });
    const sh = async (...args: string[]) => (await run('git', ['-C', clone, ...args], { env: gitEnv })).stdout.trim();
    await sh('checkout', '-q', '-b', 'ci');
    await fs.writeFile(path.join(clone, '.gitlab-ci.yml'), CI);
    await sh('add', '.gitlab-ci.yml');
    await sh('commit', '-q', '-m', 'CI for requests');
    await sh('push', '-q', 'origin', 'ci');
    head = await sh('rev-parse', 'HEAD');
    const opened = await api('POST', `/projects/${fork.id}/merge_requests`, contribToken, {
      source_branch: 'ci', target_branch: 'main', title: 'With CI', target_project_id: upstream.id,
    });
    assert.equal(opened.statusCode, 201, opened.body);
    iid = opened.json().iid;
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it("runs in the fork for its author, and in the target for the target's developers, where the target's runner takes it", async () => {
    // Opening the request ran one in the fork: its author is nobody in the target.
    const first = await waitFor('the pipeline of the opening', async () => {
      const rows = await t.db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', fork.id)
        .where('source', '=', 'merge_request_event').orderBy('id').execute();
      return rows.length > 0 ? rows[0] : undefined;
    }, 20_000);
    assert.deepEqual([first.ref, first.sha], ['ci', head]);

    const byAuthor = await runPipeline(contribToken);
    assert.equal(byAuthor.statusCode, 200, byAuthor.body);
    const inFork = byAuthor.json() as Pipeline;
    assert.deepEqual([inFork.project_id, inFork.ref, inFork.sha, inFork.source], [fork.id, 'ci', head, 'merge_request_event']);
    assert.equal(inFork.web_url, `${t.url}/${fork.path_with_namespace}/-/pipelines/${inFork.id}`);

    const byOwner = await runPipeline(ownerToken);
    assert.equal(byOwner.statusCode, 200, byOwner.body);
    const inTarget = byOwner.json() as Pipeline;
    const ref = `refs/merge-requests/${iid}/head`;
    assert.deepEqual([inTarget.project_id, inTarget.ref, inTarget.sha, inTarget.source], [upstream.id, ref, head, 'merge_request_event']);
    assert.equal(inTarget.web_url, `${t.url}/${upstream.path_with_namespace}/-/pipelines/${inTarget.id}`);

    // The request lists the pipelines of both projects, newest first (the push that preceded the
    // request may have added another of the fork's, so those are counted from the table).
    const listed = await api('GET', `/projects/${upstream.id}/merge_requests/${iid}/pipelines`, ownerToken);
    assert.equal(listed.statusCode, 200, listed.body);
    const list = listed.json() as Pipeline[];
    const all = await t.db.selectFrom('ci_pipelines').select(['id', 'project_id']).where('source', '=', 'merge_request_event')
      .orderBy('id', 'desc').execute();
    assert.deepEqual(list.map((p) => [p.id, p.project_id]), all.map((p) => [p.id, p.project_id]));
    assert.deepEqual(list.slice(0, 2).map((p) => [p.id, p.project_id]), [[inTarget.id, upstream.id], [inFork.id, fork.id]]);
    assert.ok(list.some((p) => p.id === first.id));
    assert.equal(list[0].web_url, inTarget.web_url);
    assert.equal(list[1].web_url, inFork.web_url);

    // The target's runner takes the target's job, with the target's variables, and nothing of the fork's.
    const job = await runner.requestJob();
    assert.equal(job.job_info.project_id, upstream.id);
    assert.equal(job.git_info.ref, ref);
    assert.equal(job.git_info.sha, head);
    // The pipeline's persistent ref first (Ci::BuildRunnerPresenter), then the request's head ref.
    const pipelineRef = `refs/pipelines/${inTarget.id}`;
    assert.deepEqual(job.git_info.refspecs, [`+${pipelineRef}:${pipelineRef}`, `+${ref}:${ref}`]);
    const vars = new Map(job.variables.map((v) => [v.key, v.value]));
    assert.equal(vars.get('TARGET_ONLY'), 'value of TARGET_ONLY');
    assert.equal(vars.has('FORK_ONLY'), false);
    assert.equal(vars.get('CI_PIPELINE_SOURCE'), 'merge_request_event');
    assert.equal(vars.get('CI_PROJECT_ID'), String(upstream.id));
    assert.equal(vars.get('CI_MERGE_REQUEST_IID'), String(iid));
    assert.equal(vars.get('CI_MERGE_REQUEST_SOURCE_PROJECT_ID'), String(fork.id));
    assert.equal(vars.get('CI_COMMIT_SHA'), head);
    const r1 = await runner.appendTrace(job, 'hi\n');
    assert.equal(r1.statusCode, 202, r1.body);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    await waitFor('the pipeline to succeed', async () => {
      const p = (await api('GET', `/projects/${upstream.id}/pipelines/${inTarget.id}`, ownerToken)).json() as Pipeline;
      return p.status === 'success' ? true : undefined;
    }, 20_000);
    assert.equal(await runner.request(), null);
  });

  it('stays in the fork while the kill switch is on for the target, where its owner may not run pipelines', async () => {
    const on = await api('POST', `/features/${FLAG}`, ROOT_TOKEN, { value: 'true', project: upstream.path_with_namespace });
    assert.equal(on.statusCode, 201, on.body);
    const refused = await runPipeline(ownerToken);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(refused.json(), { message: { base: ['Insufficient permissions to create a new pipeline'] } });
    const byAuthor = await runPipeline(contribToken);
    assert.equal(byAuthor.statusCode, 200, byAuthor.body);
    assert.equal(byAuthor.json().project_id, fork.id);
    const off = await api('DELETE', `/features/${FLAG}`, ROOT_TOKEN);
    assert.equal(off.statusCode, 204, off.body);
    const again = await runPipeline(ownerToken);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().project_id, upstream.id);
  });
});
