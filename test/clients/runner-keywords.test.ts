/**
 * `kiln runner` with the CI keywords of issue 14 (parallel:matrix, retry, cache, allow_failure:
 * exit_codes), end to end as in runner.test.ts: the runner already reads the Service's payload
 * shapes for them (cache entries with key/paths/policy/when, exit codes in its final update), and
 * these tests prove it once the server sends them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { fakeDocker, jobTrace, register, scratchHome, startRunner, waitForPipeline, type JobView, type RunnerDaemon } from '../runner/helpers.ts';

const REGISTRATION_TOKEN = 'kiln-runner-keywords-registration-token';

async function allJobs(t: ListeningTestApp, p: CiProject, pipelineId: number): Promise<JobView[]> {
  const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipelineId}/jobs?per_page=100&include_retried=true`, token: p.ownerToken });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as JobView[]).sort((a, b) => a.id - b.id);
}

describe('kiln runner with the CI keywords (end to end)', () => {
  let t: ListeningTestApp;
  let home: string;
  let runner: RunnerDaemon;
  let dockerRunner: RunnerDaemon;
  let docker: Awaited<ReturnType<typeof fakeDocker>>;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    const config = await register(t, home, REGISTRATION_TOKEN, ['--concurrent', '4']);
    runner = startRunner(home, ['--config', config]);
    // A second runner, docker executor with a stand-in daemon, for the jobs tagged docker.
    docker = await fakeDocker(home);
    const dockerConfig = await register(t, home, REGISTRATION_TOKEN, ['--executor', 'docker', '--tag-list', 'docker'], 'docker.toml');
    dockerRunner = startRunner(home, ['--config', dockerConfig], docker.env);
  });

  after(async () => {
    await runner?.stop('SIGTERM');
    await dockerRunner?.stop('SIGTERM');
    await docker?.close();
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('runs every job of a parallel:matrix with its own variables', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
build:
  script: [echo "building for $OS on $ARCH"]
  parallel:
    matrix:
      - OS: [linux, bsd]
        ARCH: [amd64, arm64]
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const jobs = await allJobs(t, p, pipeline.id);
    assert.deepEqual(jobs.map((j) => j.name).sort(), ['build: [bsd, amd64]', 'build: [bsd, arm64]', 'build: [linux, amd64]', 'build: [linux, arm64]']);
    for (const job of jobs) {
      assert.equal(job.status, 'success');
      const [, os, arch] = /^build: \[(\w+), (\w+)\]$/.exec(job.name)!;
      assert.match(await jobTrace(t, p, job.id), new RegExp(`\\nbuilding for ${os} on ${arch}\\n`));
    }
  });

  it('retries a failed job, and the retry that succeeds makes the pipeline pass', async () => {
    const p = await createCiProject(t);
    // The first attempt leaves a marker under CI_BUILDS_DIR (kept between jobs) and fails.
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
flaky:
  retry: 2
  script:
    - marker="$CI_BUILDS_DIR/retry-marker-$CI_PIPELINE_ID"
    - if [ ! -f "$marker" ]; then touch "$marker"; echo "first attempt fails"; exit 1; fi
    - echo "second attempt passes"
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const jobs = await allJobs(t, p, pipeline.id);
    assert.deepEqual(jobs.map((j) => [j.name, j.status]), [['flaky', 'failed'], ['flaky', 'success']]);
    assert.equal(jobs[0].failure_reason, 'script_failure');
    assert.match(await jobTrace(t, p, jobs[0].id), /first attempt fails/);
    assert.match(await jobTrace(t, p, jobs[1].id), /second attempt passes/);
  });

  it('keeps a cache that the next pipeline restores (key, paths, policy)', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
stages: [deps, check]
install:
  stage: deps
  cache:
    key: deps-$CI_COMMIT_REF_SLUG
    paths: [vendor/]
  script:
    # A block scalar: a plain one holding ": " would be read as a mapping (and refused, as the Service refuses it).
    - |
      if [ -f vendor/dep.txt ]; then echo "cache hit: $(cat vendor/dep.txt)"; else mkdir -p vendor; echo "from pipeline $CI_PIPELINE_ID" > vendor/dep.txt; echo "cache miss"; fi
check:
  stage: check
  cache:
    key: deps-$CI_COMMIT_REF_SLUG
    paths: [vendor/]
    policy: pull
  script:
    - cat vendor/dep.txt
    - echo "changed by check" > vendor/dep.txt
`,
    });
    const first = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, first.id)).status, 'success');
    const firstJobs = await allJobs(t, p, first.id);
    assert.match(await jobTrace(t, p, firstJobs.find((j) => j.name === 'install')!.id), /cache miss/);
    assert.match(await jobTrace(t, p, firstJobs.find((j) => j.name === 'check')!.id), new RegExp(`\\nfrom pipeline ${first.id}\\n`));

    const second = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, second.id)).status, 'success');
    const secondJobs = await allJobs(t, p, second.id);
    const install = await jobTrace(t, p, secondJobs.find((j) => j.name === 'install')!.id);
    // The pull-only job's change was never saved: the second pipeline sees the first one's file.
    assert.match(install, new RegExp(`cache hit: from pipeline ${first.id}\\n`));
    assert.match(install, /section_start:\d+:restore_cache/);
    assert.match(install, /section_start:\d+:archive_cache/);
  });

  it('starts services under their aliases and honours entrypoint and pull_policy (docker executor)', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
with-services:
  tags: [docker]
  image:
    name: alpine:3.20
    entrypoint: [""]
    pull_policy: [if-not-present]
  services:
    - postgres:14
    - name: registry.example.com/tools/redis:7
      alias: cache
      entrypoint: [redis-server]
      command: ["--port", "6380"]
  script: [echo "services up"]
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const job = (await allJobs(t, p, pipeline.id))[0];
    const trace = await jobTrace(t, p, job.id);
    assert.match(trace, /Using locally found image alpine:3\.20/);
    assert.match(trace, /Starting service postgres:14/);
    assert.match(trace, /Starting service registry\.example\.com\/tools\/redis:7/);
    assert.match(trace, /\nservices up\n/);
    const log = await docker.log();
    assert.match(log, /^image inspect alpine:3\.20$/m);
    assert.doesNotMatch(log, /^pull alpine:3\.20$/m);
    assert.match(log, /^run -d --name kiln-job-\d+-[0-9a-f]{8}-service-0 --network \S+ --network-alias postgres postgres:14$/m);
    assert.match(log, /^run -d --name \S+-service-1 --network \S+ --network-alias registry\.example\.com__tools__redis --network-alias registry\.example\.com-tools-redis --network-alias cache --entrypoint redis-server registry\.example\.com\/tools\/redis:7 --port 6380$/m);
    assert.match(log, /^run --rm -i .* --entrypoint {2}alpine:3\.20 sh -c /m);
  });

  it('allow_failure:exit_codes lets only the listed exit codes fail without failing the pipeline', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
stages: [test, deploy]
allowed:
  stage: test
  script: [exit 42]
  allow_failure:
    exit_codes: [42, 43]
deploy:
  stage: deploy
  script: [echo deployed]
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const jobs = await allJobs(t, p, pipeline.id);
    const allowed = jobs.find((j) => j.name === 'allowed')!;
    assert.equal(allowed.status, 'failed');
    assert.equal(allowed.allow_failure, true);
    assert.match(await jobTrace(t, p, allowed.id), /ERROR: Job failed: exit code 42/);
    assert.equal(jobs.find((j) => j.name === 'deploy')!.status, 'success');

    const q = await createCiProject(t);
    await pushFiles(t, q, {
      '.gitlab-ci.yml': 'other:\n  script: [exit 1]\n  allow_failure:\n    exit_codes: 42\n',
    });
    const failing = await createPipeline(t, q);
    assert.equal((await waitForPipeline(t, q, failing.id)).status, 'failed');
    const other = (await allJobs(t, q, failing.id))[0];
    assert.equal(other.status, 'failed');
    assert.equal(other.allow_failure, false);
    assert.equal(other.failure_reason, 'script_failure');
  });
});
