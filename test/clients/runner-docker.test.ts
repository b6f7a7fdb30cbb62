/**
 * `kiln runner` with the docker executor (issue 15, item 5), end to end against a real kiln but a
 * stand-in for Docker (this machine has no daemon; see fakeDocker): what the runner asks of
 * Docker for a job with an image (pull, a network of its own, the script in a container with the
 * project directory mounted, everything removed afterwards), that variable values never appear
 * on a docker command line, and a pull that fails ending the job with runner_system_failure.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { fakeDocker, jobsByName, jobTrace, register, scratchHome, startRunner, waitForPipeline, type RunnerDaemon } from '../runner/helpers.ts';

const REGISTRATION_TOKEN = 'kiln-runner-docker-registration-token';

describe('kiln runner, docker executor (end to end, stand-in daemon)', () => {
  let t: ListeningTestApp;
  let home: string;
  let runner: RunnerDaemon;
  let docker: Awaited<ReturnType<typeof fakeDocker>>;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    docker = await fakeDocker(home);
    const config = await register(t, home, REGISTRATION_TOKEN, ['--executor', 'docker', '--docker-image', 'debian:12']);
    runner = startRunner(home, ['--config', config], docker.env);
  });

  after(async () => {
    await runner?.stop('SIGTERM');
    await docker?.close();
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('runs a job with an image in a container on a network of its own, and removes them afterwards', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      'hello.txt': 'from the repository\n',
      '.gitlab-ci.yml': `
build:
  image: alpine:3.20
  script:
    - cat hello.txt
    - echo "job $CI_JOB_ID in $CI_PROJECT_DIR" > out.txt
    - echo "token $CI_JOB_TOKEN"
  after_script: [echo "after $CI_JOB_STATUS"]
  artifacts:
    paths: [out.txt]
default-image:
  script: [echo "in the default image"]
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success', runner.log());
    const jobs = await jobsByName(t, p, pipeline.id);
    const trace = await jobTrace(t, p, jobs.build.id);
    assert.match(trace, /Using Docker executor with image alpine:3\.20/);
    assert.match(trace, /Pulling docker image alpine:3\.20/);
    assert.match(trace, /\nfrom the repository\n/);
    assert.match(trace, /\ntoken \[MASKED\]\n/);
    assert.match(trace, /\nafter success\n/);
    assert.match(await jobTrace(t, p, jobs['default-image'].id), /Using Docker executor with image debian:12[\s\S]*\nin the default image\n/);

    const log = await docker.log();
    const lines = log.trim().split('\n').filter((l) => l.includes(`kiln-job-${jobs.build.id}-`) || l === 'pull alpine:3.20');
    assert.equal(lines[0], 'pull alpine:3.20');
    assert.match(lines[1], new RegExp(`^network create (kiln-job-${jobs.build.id}-[0-9a-f]{8}-network)$`));
    const network = /^network create (\S+)$/.exec(lines[1])![1];
    const runs = lines.filter((l) => l.startsWith('run --rm -i'));
    assert.equal(runs.length, 2, 'the script and after_script, each in its own container');
    for (const run of runs) {
      assert.match(run, new RegExp(`--network ${network} `));
      assert.match(run, / -e CI_JOB_TOKEN /);
      assert.match(run, / -w \/\S+ /);
      assert.match(run, / alpine:3\.20 sh -c /);
    }
    assert.ok(lines.some((l) => /^rm -f kiln-job-\d+-[0-9a-f]{8}-step_script$/.test(l)));
    assert.equal(lines.at(-1), `network rm ${network}`);
    // Values go through the CLI's environment, never its arguments.
    assert.doesNotMatch(log, /CI_JOB_TOKEN=|CI_JOB_ID=|CI_REPOSITORY_URL=|gitlab-ci-token/);
  });

  it('fails with runner_system_failure when the image cannot be pulled', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'nope:\n  image: missing:1\n  script: [echo never]\n' });
    const pipeline = await createPipeline(t, p);
    await waitForPipeline(t, p, pipeline.id);
    const job = (await jobsByName(t, p, pipeline.id)).nope;
    assert.equal(job.status, 'failed');
    assert.equal(job.failure_reason, 'runner_system_failure');
    const trace = await jobTrace(t, p, job.id);
    assert.match(trace, /manifest unknown/);
    assert.match(trace, /ERROR: Job failed \(system failure\): failed to pull image "missing:1"/);
    assert.doesNotMatch(trace, /section_start:\d+:step_script/);
  });
});
