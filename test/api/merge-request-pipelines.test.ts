/**
 * Merge request pipelines (issue 30, item 2): source `merge_request_event` on
 * refs/merge-requests/:iid/head, created when a request opens and on each push to its source
 * branch only when a job asks for them, their jobs' CI_MERGE_REQUEST_* variables, the documented
 * workflow:rules that avoid duplicate branch and merge request pipelines (CI_OPEN_MERGE_REQUESTS),
 * and POST …/merge_requests/:iid/pipelines.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pipelineJobs, type CiProject } from '../helpers/ci.ts';
import { pushClone, waitForPipelines, type PushClone } from '../helpers/ci-push.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { createToken, createUser } from '../helpers/factories.ts';

const settle = () => new Promise((resolve) => setTimeout(resolve, 700));

describe('merge request pipelines', () => {
  let t: ListeningTestApp;
  const clones: PushClone[] = [];

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
  });
  after(async () => {
    for (const c of clones) await c.remove();
    await t.close();
  });

  async function setUp(config: string) {
    const p = await createCiProject(t);
    const clone = await pushClone(t.url, p);
    clones.push(clone);
    const main = await clone.commitAndPush({ '.gitlab-ci.yml': config, 'README.md': 'hi\n' });
    await waitForPipelines(t, p, 1);
    await clone.run(['checkout', '--quiet', '-b', 'feature']);
    return { p, clone, main };
  }

  const openRequest = async (p: CiProject, extra: Record<string, unknown> = {}) => {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/merge_requests`, token: p.ownerToken,
      payload: { source_branch: 'feature', target_branch: 'main', title: 'Add a feature', ...extra },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { iid: number; id: number };
  };

  it('follows the documented workflow: one merge request pipeline per push once a request is open, no branch duplicate', async () => {
    // The Service's "Switch between branch pipelines and merge request pipelines" example.
    const { p, clone } = await setUp([
      'workflow:',
      '  rules:',
      '    - if: $CI_PIPELINE_SOURCE == "merge_request_event"',
      '    - if: $CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS',
      '      when: never',
      '    - if: $CI_COMMIT_BRANCH',
      'job:',
      '  script: echo hi',
      '',
    ].join('\n'));
    const first = await clone.commitAndPush({ 'a.txt': 'a\n' }, { branch: 'feature' });
    let list = await waitForPipelines(t, p, 2);
    assert.deepEqual([list[1].ref, list[1].source, list[1].sha], ['feature', 'push', first]);

    const mr = await openRequest(p);
    list = await waitForPipelines(t, p, 3);
    assert.deepEqual([list[2].ref, list[2].source, list[2].sha], [`refs/merge-requests/${mr.iid}/head`, 'merge_request_event', first]);

    const second = await clone.commitAndPush({ 'b.txt': 'b\n' }, { branch: 'feature' });
    list = await waitForPipelines(t, p, 4);
    await settle();
    list = await waitForPipelines(t, p, 4);
    assert.equal(list.length, 4, 'no branch pipeline beside the merge request pipeline');
    assert.deepEqual([list[3].ref, list[3].source, list[3].sha], [`refs/merge-requests/${mr.iid}/head`, 'merge_request_event', second]);

    const pipelines = (await t.request({
      method: 'GET', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}/pipelines`, token: p.ownerToken,
    })).json() as Array<{ id: number; source: string }>;
    assert.deepEqual(pipelines.map((x) => x.id), [list[3].id, list[2].id, list[1].id]);
    const shown = (await t.request({
      method: 'GET', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}`, token: p.ownerToken,
    })).json() as { head_pipeline: { id: number } | null };
    assert.equal(shown.head_pipeline?.id, list[3].id);

    // `[skip ci]` skips both, before the configuration is read (Chain::Skip).
    const skipped = await clone.commitAndPush({ 'c.txt': 'c\n' }, { branch: 'feature', message: 'Quiet [skip ci]' });
    list = await waitForPipelines(t, p, 6);
    await settle();
    list = await waitForPipelines(t, p, 6);
    assert.equal(list.length, 6);
    assert.deepEqual(list.slice(4).map((x) => [x.source, x.status, x.sha]).sort(), [
      ['merge_request_event', 'skipped', skipped], ['push', 'skipped', skipped],
    ]);
  });

  it('creates none for a configuration without merge request jobs', async () => {
    const { p, clone } = await setUp('build:\n  script: make\n');
    await clone.commitAndPush({ 'a.txt': 'a\n' }, { branch: 'feature' });
    await waitForPipelines(t, p, 2);
    const mr = await openRequest(p);
    await clone.commitAndPush({ 'b.txt': 'b\n' }, { branch: 'feature' });
    await waitForPipelines(t, p, 3);
    await settle();
    const list = await waitForPipelines(t, p, 3);
    assert.equal(list.length, 3);
    assert.ok(list.every((x) => x.source === 'push'));
    // The API's request answers the pipeline's base error.
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}/pipelines`, token: p.ownerToken,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json(), { message: { base: ['No stages / jobs for this pipeline.'] } });
    // A Reporter reads the request but may not create pipelines (Chain::Validate::Abilities).
    const reporter = await createUser(t.db);
    const member = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: reporter.id, access_level: 20 },
    });
    assert.equal(member.statusCode, 201, member.body);
    const refused = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}/pipelines`,
      token: await createToken(t.db, reporter, { scopes: ['api'] }),
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(refused.json(), { message: { base: ['Insufficient permissions to create a new pipeline'] } });
  });

  it('gives the jobs the merge request variables and the ref to fetch; POST creates another', async () => {
    const { p, clone, main } = await setUp([
      'build:',
      '  script: make',
      'mr-only:',
      '  script: make test',
      '  tags: [mr-vars]',
      '  only: [merge_requests]',
      'mr-rules:',
      '  script: make lint',
      '  tags: [mr-never]',
      '  rules:',
      '    - if: $CI_PIPELINE_SOURCE == "merge_request_event" && $CI_MERGE_REQUEST_TARGET_BRANCH_NAME == "other"',
      '',
    ].join('\n'));
    const head = await clone.commitAndPush({ 'a.txt': 'a\n' }, { branch: 'feature' });
    await waitForPipelines(t, p, 2);
    const mr = await openRequest(p, { labels: 'zeta,alpha', assignee_ids: [p.owner.id] });
    const list = await waitForPipelines(t, p, 3);
    const mrPipeline = list[2];
    assert.equal(mrPipeline.source, 'merge_request_event');
    assert.deepEqual((await pipelineJobs(t, p, mrPipeline.id)).map((j) => j.name), ['mr-only']);
    // The branch pipelines never ran the merge request job.
    assert.deepEqual((await pipelineJobs(t, p, list[1].id)).map((j) => j.name), ['build']);

    const runner = await TestRunner.register(t, { tags: ['mr-vars'], runUntagged: false });
    const job = await runner.requestJob();
    const ref = `refs/merge-requests/${mr.iid}/head`;
    assert.equal(job.git_info.ref, ref);
    assert.equal(job.git_info.sha, head);
    assert.deepEqual(job.git_info.refspecs, [`+refs/pipelines/${mrPipeline.id}:refs/pipelines/${mrPipeline.id}`, `+${ref}:${ref}`]);
    const vars = new Map(job.variables.map((v) => [v.key, v.value]));
    const expected: Record<string, string> = {
      CI_PIPELINE_SOURCE: 'merge_request_event',
      CI_COMMIT_REF_NAME: 'feature',
      CI_COMMIT_SHA: head,
      CI_MERGE_REQUEST_EVENT_TYPE: 'detached',
      CI_MERGE_REQUEST_ID: String(mr.id),
      CI_MERGE_REQUEST_IID: String(mr.iid),
      CI_MERGE_REQUEST_REF_PATH: ref,
      CI_MERGE_REQUEST_TITLE: 'Add a feature',
      CI_MERGE_REQUEST_PROJECT_ID: String(p.project.id),
      CI_MERGE_REQUEST_PROJECT_PATH: p.fullPath,
      CI_MERGE_REQUEST_SOURCE_PROJECT_ID: String(p.project.id),
      CI_MERGE_REQUEST_SOURCE_PROJECT_PATH: p.fullPath,
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature',
      CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
      CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED: 'true',
      CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: '',
      CI_MERGE_REQUEST_TARGET_BRANCH_SHA: '',
      CI_MERGE_REQUEST_DIFF_BASE_SHA: main,
      CI_MERGE_REQUEST_LABELS: 'alpha,zeta',
      CI_MERGE_REQUEST_ASSIGNEES: p.owner.username,
      CI_OPEN_MERGE_REQUESTS: `${p.fullPath}!${mr.iid}`,
    };
    for (const [k, v] of Object.entries(expected)) assert.equal(vars.get(k), v, k);
    assert.ok(vars.get('CI_MERGE_REQUEST_PROJECT_URL')?.endsWith(`/${p.fullPath}`));
    assert.equal(vars.has('CI_COMMIT_BRANCH'), false);
    assert.equal(vars.has('CI_MERGE_REQUEST_MILESTONE'), false);

    // The ref is in the repository for the runner to fetch.
    const remote = await clone.run(['ls-remote', 'origin', ref]);
    assert.equal(remote.split(/\s+/)[0], head);

    // POST …/pipelines: another one on the same head, answered 200 as the Service does.
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}/pipelines`, token: p.ownerToken,
    });
    assert.equal(res.statusCode, 200, res.body);
    const created = res.json() as { id: number; source: string; ref: string; sha: string };
    assert.deepEqual([created.source, created.ref, created.sha], ['merge_request_event', ref, head]);
    assert.ok(created.id > mrPipeline.id);

    // Merge when pipeline succeeds waits for the head pipeline, here the merge request pipeline just created.
    const mwps = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}/merge`, token: p.ownerToken,
      payload: { merge_when_pipeline_succeeds: true },
    });
    assert.equal(mwps.statusCode, 200, mwps.body);
    assert.equal((mwps.json() as { state: string }).state, 'opened');
    await runner.update(job, 'success');
    const next = await runner.requestJob();
    assert.equal(next.git_info.sha, head);
    assert.equal((await runner.update(next, 'success')).statusCode, 200);
    const deadline = Date.now() + 10_000;
    let state = 'opened';
    while (state !== 'merged' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = ((await t.request({
        method: 'GET', url: `/api/v4/projects/${p.project.id}/merge_requests/${mr.iid}`, token: p.ownerToken,
      })).json() as { state: string }).state;
    }
    assert.equal(state, 'merged');

    const missing = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/merge_requests/999/pipelines`, token: p.ownerToken,
    });
    assert.equal(missing.statusCode, 404);
  });
});
