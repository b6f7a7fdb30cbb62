/**
 * `kiln runner` running a pipeline built from a CI/CD component with inputs (issue 28, item 5):
 * a component project released at a tag, a project whose `.gitlab-ci.yml` includes it with
 * inputs of each type and also makes a child pipeline from it (`trigger:include:component`),
 * and the shell runner as its own process. The job logs must show the values interpolated
 * into the jobs, defaults where no input was given, and the functions' results.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { jobsByName, jobTrace, register, scratchHome, startRunner, waitForPipeline, type RunnerDaemon } from '../runner/helpers.ts';

const REGISTRATION_TOKEN = 'kiln-runner-components-registration-token';

/** A component with a required input, typed inputs with defaults, and the interpolation functions. */
const GREET = `spec:
  inputs:
    who:
      description: Whom to greet
    times:
      type: number
      default: 2
    stage:
      default: test
      options: [build, test]
    loud:
      type: boolean
      default: false
    flavours:
      type: array
      default: [plain]
    ref:
      default: $CI_COMMIT_REF_NAME-and-more
---
"greet-$[[ inputs.who ]]":
  stage: $[[ inputs.stage ]]
  variables:
    GREETING: "hello $[[ inputs.who ]]"
  script:
    - echo "$GREETING times $[[ inputs.times ]] in $[[ inputs.stage ]] loud=$[[ inputs.loud ]]"
    - echo 'flavours $[[ inputs.flavours ]]'
    - echo "ref $[[ inputs.ref | expand_vars | truncate(0,4) ]]" 'raw $[[ inputs.ref ]]'
`;

describe('kiln runner runs jobs from a component with inputs', () => {
  let t: ListeningTestApp;
  let home: string;
  let runner: RunnerDaemon;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    const config = await register(t, home, REGISTRATION_TOKEN, ['--concurrent', '2']);
    runner = startRunner(home, ['--config', config]);
  });

  after(async () => {
    await runner?.stop('SIGTERM');
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('interpolates the inputs into the job the runner runs, in the pipeline and in a child pipeline', async () => {
    const components = await createCiProject(t);
    await pushFiles(t, components, { 'templates/greet.yml': GREET }, { tag: '1.0.0' });
    const p = await createCiProject(t, { owner: components.owner });
    const address = `$CI_SERVER_FQDN/${components.fullPath}/greet@1.0.0`;
    await pushFiles(t, p, {
      '.gitlab-ci.yml': [
        'stages: [build, test]',
        'include:',
        `  - component: ${address}`,
        '    inputs: { who: world, times: 3, stage: build, loud: true, flavours: [vanilla, mint] }',
        'child:',
        '  stage: test',
        '  trigger:',
        `    include: [{ component: "${address}", inputs: { who: child } }]`,
        '    strategy: depend',
        '',
      ].join('\n'),
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');

    const jobs = await jobsByName(t, p, pipeline.id);
    assert.deepEqual(Object.keys(jobs), ['greet-world']);
    assert.equal(jobs['greet-world'].stage, 'build');
    const trace = await jobTrace(t, p, jobs['greet-world'].id);
    assert.match(trace, /^hello world times 3 in build loud=true$/m);
    // An array input inside a longer string reads as its JSON-like text.
    assert.match(trace, /^flavours \["vanilla", "mint"\]$/m);
    // expand_vars expands the pipeline's variables in the value, truncate keeps the first four characters.
    assert.match(trace, /^ref main raw \$CI_COMMIT_REF_NAME-and-more$/m);

    // The child pipeline is the component alone, with its defaults where the trigger gave no input.
    const bridge = await t.db.selectFrom('ci_builds').select(['status', 'downstream_pipeline_id'])
      .where('pipeline_id', '=', pipeline.id).where('name', '=', 'child').executeTakeFirstOrThrow();
    assert.equal(bridge.status, 'success');
    assert.ok(bridge.downstream_pipeline_id !== null);
    const childJobs = await jobsByName(t, p, bridge.downstream_pipeline_id);
    assert.deepEqual(Object.keys(childJobs), ['greet-child']);
    assert.equal(childJobs['greet-child'].stage, 'test');
    assert.equal(childJobs['greet-child'].status, 'success');
    const childTrace = await jobTrace(t, p, childJobs['greet-child'].id);
    assert.match(childTrace, /^hello child times 2 in test loud=false$/m);
    assert.match(childTrace, /^flavours \["plain"\]$/m);
  });
});
