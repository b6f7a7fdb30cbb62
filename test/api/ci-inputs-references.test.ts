/**
 * CI as projects write it today (issue 28), at the HTTP boundary through a real `git push`:
 * a job's `rules:` and `needs:` assembled from `!reference` pieces (nested lists spliced in as the
 * Service's Entry::Rules and Entry::Needs do), and a local file with a `spec: inputs` header
 * included with `inputs:`, its `$[[ inputs.… ]]` interpolated into the jobs the pipeline gets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pipelineJobs, type CiProject } from '../helpers/ci.ts';
import { pushClone, waitForPipelines, type PushClone } from '../helpers/ci-push.ts';

describe('CI !reference lists and spec:inputs through a push', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;
  let pushes = 0;

  before(async () => {
    t = await startListeningApp();
    p = await createCiProject(t);
    clone = await pushClone(t.url, p);
  });
  after(async () => {
    await clone.remove();
    await t.close();
  });

  const row = (pipelineId: number, name: string) => t.db.selectFrom('ci_builds').selectAll()
    .where('pipeline_id', '=', pipelineId).where('name', '=', name).executeTakeFirstOrThrow();

  async function pushed(files: Record<string, string>) {
    await clone.commitAndPush(files);
    pushes += 1;
    return (await waitForPipelines(t, p, pushes))[pushes - 1];
  }

  it('builds a job\'s rules and needs from !reference pieces', async () => {
    const pipeline = await pushed({
      '.gitlab-ci.yml': [
        'stages: [build, test]',
        '.upstream_rules:',
        '  rules:',
        '    - if: $CI_COMMIT_TAG',
        '      when: never',
        '.shared: { needs: [compile] }',
        'compile: { stage: build, script: make }',
        'unit:',
        '  script: make test',
        '  needs: [!reference [.shared, needs]]',
        '  rules:',
        '    - !reference [.upstream_rules, rules]',
        '    - if: $CI_COMMIT_BRANCH == "main"',
        '      variables: { FROM_RULE: main }',
        'never_runs:',
        '  script: x',
        '  rules: [!reference [.upstream_rules, rules]]',
        '',
      ].join('\n'),
    });
    assert.equal(pipeline.status === 'failed' ? 'failed' : 'ok', 'ok', JSON.stringify(pipeline));
    assert.deepEqual((await pipelineJobs(t, p, pipeline.id)).map((j) => j.name).sort(), ['compile', 'unit']);
    const unit = await row(pipeline.id, 'unit');
    assert.deepEqual(JSON.parse(unit.needs!), ['compile']);
    assert.deepEqual(JSON.parse(unit.yaml_variables), [{ key: 'FROM_RULE', value: 'main' }]);
  });
  it('creates the jobs of a local file with spec:inputs from the inputs its include gives', async () => {
    const pipeline = await pushed({
      'ci/deploy.yml': [
        'spec:',
        '  inputs:',
        '    env: { options: [staging, production] }',
        '    replicas: { type: number, default: 1 }',
        '    steps: { type: array, default: [deploy] }',
        '---',
        '"deploy-$[[ inputs.env ]]":',
        '  stage: deploy',
        '  script: $[[ inputs.steps ]]',
        '  variables:',
        '    REPLICAS: "$[[ inputs.replicas ]]"',
        '    SHORT: "$[[ inputs.env | truncate(0, 4) ]]"',
        '',
      ].join('\n'),
      '.gitlab-ci.yml': [
        'include:',
        '  - local: ci/deploy.yml',
        '    inputs: { env: staging }',
        '  - local: ci/deploy.yml',
        '    inputs: { env: production, replicas: 3, steps: [migrate, deploy] }',
        'build: { stage: build, script: make }',
        '',
      ].join('\n'),
    });
    assert.deepEqual((await pipelineJobs(t, p, pipeline.id)).map((j) => [j.name, j.stage]).sort(),
      [['build', 'build'], ['deploy-production', 'deploy'], ['deploy-staging', 'deploy']]);
    const production = await row(pipeline.id, 'deploy-production');
    assert.deepEqual(JSON.parse(production.options).script, ['migrate', 'deploy']);
    assert.deepEqual(JSON.parse(production.yaml_variables), [{ key: 'REPLICAS', value: '3' }, { key: 'SHORT', value: 'prod' }]);
    const staging = await row(pipeline.id, 'deploy-staging');
    assert.deepEqual(JSON.parse(staging.options).script, ['deploy']);
    assert.deepEqual(JSON.parse(staging.yaml_variables), [{ key: 'REPLICAS', value: '1' }, { key: 'SHORT', value: 'stag' }]);
  });

  it('fails the pipeline with the Service\'s message for an input outside its options', async () => {
    const pipeline = await pushed({
      '.gitlab-ci.yml': 'include:\n  - local: ci/deploy.yml\n    inputs: { env: qa }\nbuild: { stage: build, script: make }\n',
    });
    const detail = (await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipeline.id}`, token: p.ownerToken }))
      .json() as { status: string; yaml_errors: string | null };
    assert.equal(detail.status, 'failed');
    assert.equal(detail.yaml_errors, '`ci/deploy.yml`: `env` input: `qa` cannot be used because it is not in the list of allowed options');
  });
});
