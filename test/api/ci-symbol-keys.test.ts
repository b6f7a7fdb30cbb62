/**
 * CI YAML with keys written as Ruby symbols (issue 35, item 7), at the HTTP boundary: the Service
 * loads `.gitlab-ci.yml` permitting symbols and symbolizes every key, so `:test_job:` with
 * `:script:` is the job `test_job`. CI lint accepts it and shows it with plain keys, and a pipeline
 * created from it has that job with that script (pushes read the configuration the same way).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';

const SYMBOLS = [
  ':stages: [build, test]',
  ':variables:', '  :GLOBAL: g',
  ':build:', '  :stage: build', '  :script: make', '  :artifacts:', '    :paths: [out/]',
  ':test_job:', '  :script: echo 1', '  :needs: [build]',
  '  :rules:', '    - :if: $CI_COMMIT_BRANCH', '      :variables:', '        :FROM_RULE: r',
  '',
].join('\n');

describe('CI YAML with symbol keys', () => {
  let t: TestApp;
  let p: CiProject;

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t);
  });
  after(async () => { await t.close(); });

  const lint = (content: string, extra: Record<string, unknown> = {}) => t.request({
    method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken,
    payload: { content, include_jobs: true, ...extra },
  });

  it('lints the issue\'s example as the job test_job', async () => {
    const res = await lint(':test_job:\n  :script: echo 1\n');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { valid: boolean; errors: string[]; merged_yaml: string; jobs: { name: string; script: string[] }[] };
    assert.deepEqual([body.valid, body.errors], [true, []]);
    assert.equal(body.merged_yaml, '---\ntest_job:\n  script: echo 1\n');
    assert.deepEqual(body.jobs.map((j) => [j.name, j.script]), [['test_job', ['echo 1']]]);
  });

  it('lints symbol keys at every level, and still refuses unknown ones in the Service\'s words', async () => {
    const res = await lint(SYMBOLS);
    const body = res.json() as { valid: boolean; errors: string[]; jobs: { name: string; stage: string; script: string[] }[] };
    assert.deepEqual([body.valid, body.errors], [true, []], res.body);
    assert.deepEqual(body.jobs.map((j) => [j.name, j.stage, j.script]), [['build', 'build', ['make']], ['test_job', 'test', ['echo 1']]]);
    const unknown = await lint(':test_job:\n  :scriptt: echo 1\n');
    assert.deepEqual(unknown.json(), {
      valid: false, errors: ['jobs:test_job config contains unknown keys: scriptt'], warnings: [], merged_yaml: null, jobs: [],
    });
    // A quoted key is a string for the Service too: `:script` stays an unknown key.
    const quoted = await lint('test_job:\n  ":script": echo 1\n');
    assert.deepEqual((quoted.json() as { errors: string[] }).errors, ['jobs:test_job config contains unknown keys: :script']);
  });

  it('creates a pipeline from symbol keys, with the job\'s script, needs and variables', async () => {
    await pushFiles(t, p, { '.gitlab-ci.yml': SYMBOLS });
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as { id: number }).id;
    assert.deepEqual((await pipelineJobs(t, p, id)).map((j) => [j.name, j.stage]).sort(), [['build', 'build'], ['test_job', 'test']]);
    const row = await t.db.selectFrom('ci_builds').selectAll()
      .where('pipeline_id', '=', id).where('name', '=', 'test_job').executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.options).script, ['echo 1']);
    assert.deepEqual(JSON.parse(row.needs!), ['build']);
    assert.deepEqual(JSON.parse(row.yaml_variables), [{ key: 'GLOBAL', value: 'g' }, { key: 'FROM_RULE', value: 'r' }]);
  });
});
