/**
 * Pipelines on push (issue 14, item 5): a `git push` over HTTP that updates a branch or creates a
 * tag whose commit holds `.gitlab-ci.yml` creates a pipeline with source `push` and the ref's
 * previous commit as `before_sha`; `[ci skip]` and `git push -o ci.skip` keep it skipped; a configuration error keeps it
 * failed with `yaml_errors`; `rules:changes` compares with the commit before the push.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pipelineJobs, type CiProject } from '../helpers/ci.ts';
import { pushClone, waitForPipelines, type PushClone } from '../helpers/ci-push.ts';

const BLANK = '0'.repeat(40);

describe('CI pipelines on push', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;

  before(async () => {
    t = await startListeningApp();
    p = await createCiProject(t);
    clone = await pushClone(t.url, p);
  });
  after(async () => {
    await clone.remove();
    await t.close();
  });

  const show = async (id: number) => (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${id}`, token: p.ownerToken })).json() as Record<string, unknown>;

  it('creates nothing for a commit without .gitlab-ci.yml, then one push pipeline per ref update', async () => {
    const first = await clone.commitAndPush({ 'README.md': 'hello\n' });
    const second = await clone.commitAndPush({
      '.gitlab-ci.yml': 'build:\n  script: make\ndocs:\n  script: make docs\n  rules:\n    - changes: [docs/**/*]\ntagged:\n  script: x\n  only: [tags]\n'
        + 'docs-only:\n  script: x\n  only:\n    changes: [docs/**/*.md]\n',
    });
    const [pipeline] = await waitForPipelines(t, p, 1);
    assert.equal(pipeline.sha, second);
    assert.equal(pipeline.source, 'push');
    const detail = await show(pipeline.id);
    assert.equal(detail.before_sha, first);
    assert.equal(detail.yaml_errors, null);
    // docs/ did not change in this push.
    assert.deepEqual((await pipelineJobs(t, p, pipeline.id)).map((j) => j.name), ['build']);
  });

  it('runs rules:changes against the push, and a tag pipeline for a new tag', async () => {
    const sha = await clone.commitAndPush({ 'docs/guide/index.md': '# Guide\n' });
    const list = await waitForPipelines(t, p, 2);
    const latest = list[list.length - 1];
    assert.equal(latest.sha, sha);
    assert.deepEqual((await pipelineJobs(t, p, latest.id)).map((j) => j.name).sort(), ['build', 'docs', 'docs-only']);
    await clone.run(['tag', 'v1.0']);
    await clone.run(['push', '--quiet', 'origin', 'refs/tags/v1.0']);
    const withTag = await waitForPipelines(t, p, 3);
    const tagPipeline = withTag[withTag.length - 1];
    assert.equal(tagPipeline.ref, 'v1.0');
    const detail = await show(tagPipeline.id);
    assert.equal(detail.tag, true);
    assert.equal(detail.before_sha, BLANK);
    // A new tag has nothing to compare with: changes hold.
    assert.deepEqual((await pipelineJobs(t, p, tagPipeline.id)).map((j) => j.name).sort(), ['build', 'docs', 'docs-only', 'tagged']);
  });

  it('keeps [ci skip] pipelines skipped and configuration errors failed with yaml_errors', async () => {
    await clone.commitAndPush({ 'a.txt': 'a\n' }, { message: 'Small fix [skip ci]' });
    const skipped = (await waitForPipelines(t, p, 4))[3];
    assert.equal(skipped.status, 'skipped');
    assert.deepEqual(await pipelineJobs(t, p, skipped.id), []);
    await clone.commitAndPush({ 'b.txt': 'b\n' }, { pushArgs: ['-o', 'ci.skip'] });
    const optionSkipped = (await waitForPipelines(t, p, 5))[4];
    assert.equal(optionSkipped.status, 'skipped');
    await clone.commitAndPush({ '.gitlab-ci.yml': 'build:\n  script: make\n  when: sometimes\n' });
    const failed = (await waitForPipelines(t, p, 6))[5];
    assert.equal(failed.status, 'failed');
    assert.equal((await show(failed.id)).yaml_errors, 'jobs:build when should be one of: on_success, on_failure, always, manual, delayed');
  });

  it('creates no pipeline when workflow:rules filter the push out, and one per pushed branch', async () => {
    await clone.commitAndPush({ '.gitlab-ci.yml': 'workflow:\n  rules:\n    - if: $CI_PIPELINE_SOURCE != "push"\nbuild:\n  script: make\n' });
    await clone.commitAndPush({ '.gitlab-ci.yml': 'build:\n  script: make\n' }, { branch: 'feature' });
    const list = await waitForPipelines(t, p, 7);
    assert.equal(list.length, 7);
    assert.equal(list[6].ref, 'feature');
    assert.equal((await show(list[6].id)).before_sha, BLANK);
  });

  it('starts a push pipeline for a commit made through the API, whose rules see the project\'s CI/CD variables', async () => {
    const variable = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/variables`, token: p.ownerToken, payload: { key: 'DEPLOY_TARGET', value: 'staging' } });
    assert.equal(variable.statusCode, 201);
    const config = 'build:\n  script: make\ndeploy:\n  script: deploy\n  rules:\n    - if: $DEPLOY_TARGET == "staging"\nnever:\n  script: x\n  rules:\n    - if: $DEPLOY_TARGET == "production"\n';
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/commits`, token: p.ownerToken,
      payload: { branch: 'main', commit_message: 'CI through the API', actions: [{ action: 'update', file_path: '.gitlab-ci.yml', content: config }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const commit = res.json() as { id: string; parent_ids: string[] };
    const list = await waitForPipelines(t, p, 8);
    const pipeline = list[7];
    assert.equal(pipeline.sha, commit.id);
    assert.equal(pipeline.source, 'push');
    assert.equal((await show(pipeline.id)).before_sha, commit.parent_ids[0]);
    assert.deepEqual((await pipelineJobs(t, p, pipeline.id)).map((j) => j.name).sort(), ['build', 'deploy']);
  });
});
