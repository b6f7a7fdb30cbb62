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
});
