/**
 * `kiln runner` end to end (issue 15): a real kiln listening on a port, projects pushed with the
 * git CLI, and the runner as its own process (register, run) taking the jobs over the runner
 * protocol: stages passing artifacts, failures with allow_failure and when: on_failure, a manual
 * job played through the API, a cancel, a timeout, jobs at once, and a job that needs Docker
 * where there is none. Assertions are on the jobs' states, their traces and their artifacts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { refTarget } from '../../src/domain/repositories/git-read.ts';
import {
  jobsByName, jobTrace, register, runnerCli, scratchHome, startRunner, storedArtifactFiles, unzipEntries, waitFor, waitForPipeline, type RunnerDaemon,
} from '../runner/helpers.ts';

const REGISTRATION_TOKEN = 'kiln-runner-e2e-registration-token';

async function project(t: ListeningTestApp, files: Record<string, string>): Promise<{ p: CiProject; pipelineId: number }> {
  const p = await createCiProject(t);
  await pushFiles(t, p, files);
  const pipeline = await createPipeline(t, p);
  return { p, pipelineId: pipeline.id };
}

/** Processes running `sleep 1234` (read from /proc, so no `ps` is needed). */
function sleepers(): string[] {
  const found: string[] = [];
  for (const pid of fsSync.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = fsSync.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      if (args === 'sleep 1234') found.push(pid);
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

describe('kiln runner (end to end)', () => {
  let t: ListeningTestApp;
  let home: string;
  let config: string;
  let runner: RunnerDaemon;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    config = await register(t, home, REGISTRATION_TOKEN, ['--concurrent', '4']);
    runner = startRunner(home, ['--config', config]);
  });

  after(async () => {
    await runner?.stop('SIGTERM');
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('registers into a TOML config readable by its owner only, and verifies its token', async () => {
    const st = await fs.stat(config);
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal((await fs.stat(path.dirname(config))).mode & 0o777, 0o700);
    const text = await fs.readFile(config, 'utf8');
    assert.match(text, /^concurrent = 4$/m);
    assert.match(text, /^\[\[runners\]\]$/m);
    assert.match(text, /^executor = "shell"$/m);
    const token = /^token = "([^"]+)"$/m.exec(text)![1];
    const row = await t.db.selectFrom('ci_runners').selectAll().where('description', '=', 'test runner').executeTakeFirstOrThrow();
    assert.equal(row.run_untagged, 1);
    assert.notEqual(row.token_digest, token, 'the server keeps a digest only');
    const verified = await runnerCli(home, ['verify', '--config', config]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /is alive/);
    const bad = await runnerCli(home, ['register', '--url', t.url, '--registration-token', 'wrong', '--config', path.join(home, 'other.toml')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /403/);
  });

  it('runs a three-stage pipeline, passing artifacts from stage to stage', async () => {
    const { p, pipelineId } = await project(t, {
      'src/app.txt': 'the sources\n',
      '.gitlab-ci.yml': `
stages: [build, test, deploy]
variables:
  GREETING: "hello from $CI_PROJECT_NAME"
build:
  stage: build
  before_script: [echo preparing]
  script:
    - mkdir -p out/nested
    - echo "built $CI_COMMIT_SHORT_SHA from $(cat src/app.txt)" > out/hello.txt
    - echo deep > out/nested/deep.txt
    - echo "$GREETING"
    - 'echo "<testsuite name=\\"t\\" tests=\\"1\\"><testcase name=\\"a\\"/></testsuite>" > junit.xml'
  after_script: [echo "after status $CI_JOB_STATUS"]
  artifacts:
    name: build-output
    paths: [out/]
    expire_in: 1 week
    reports:
      junit: junit.xml
test:
  stage: test
  script:
    - test -f out/hello.txt
    - cat out/hello.txt
    - mkdir -p report && echo "tested $(cat out/nested/deep.txt)" > report/summary.txt
  artifacts:
    paths: [report/summary.txt]
deploy:
  stage: deploy
  script:
    - cat out/hello.txt report/summary.txt
    - echo "token is $CI_JOB_TOKEN"
`,
    });
    const pipeline = await waitForPipeline(t, p, pipelineId);
    const jobs = await jobsByName(t, p, pipelineId);
    assert.equal(pipeline.status, 'success', JSON.stringify(jobs) + runner.log());
    assert.deepEqual(Object.fromEntries(Object.values(jobs).map((j) => [j.name, j.status])), { build: 'success', test: 'success', deploy: 'success' });

    const build = await jobTrace(t, p, jobs.build.id);
    for (const section of ['prepare_executor', 'prepare_script', 'get_sources', 'step_script', 'after_script', 'upload_artifacts_on_success', 'cleanup_file_variables']) {
      assert.match(build, new RegExp(`section_start:\\d+:${section}\\r\\x1b\\[0K`), section);
      assert.match(build, new RegExp(`section_end:\\d+:${section}\\r\\x1b\\[0K`), section);
    }
    assert.match(build, /\$ echo preparing\x1b\[0;m\npreparing\n/);
    assert.match(build, /hello from ci-project-/);
    assert.match(build, /after status success/);
    assert.match(build, /Job succeeded/);

    const archive = await storedArtifactFiles(t, jobs.build.id);
    assert.match(archive.get('out/hello.txt')!, /^built [0-9a-f]{8} from the sources\n$/);
    assert.equal(archive.get('out/nested/deep.txt'), 'deep\n');
    assert.ok(!archive.has('junit.xml'), 'reports are not in the archive');
    // The archive as users fetch it through the job artifacts API, and one file out of it.
    const viaApi = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${jobs.build.id}/artifacts`, token: p.ownerToken });
    assert.equal(viaApi.statusCode, 200);
    assert.deepEqual(await unzipEntries(viaApi.rawPayload), archive);
    const oneFile = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/jobs/${jobs.build.id}/artifacts/out/hello.txt`, token: p.ownerToken });
    assert.equal(oneFile.statusCode, 200);
    assert.equal(oneFile.body, archive.get('out/hello.txt'));
    const kinds = jobs.build.artifacts.map((a) => a.file_type).sort();
    assert.deepEqual(kinds, ['archive', 'junit', 'metadata', 'trace']);
    assert.equal(jobs.build.artifacts.find((a) => a.file_type === 'archive')!.filename, 'build-output.zip');
    const expires = await t.db.selectFrom('ci_builds').select('artifacts_expire_at').where('id', '=', jobs.build.id).executeTakeFirstOrThrow();
    const days = (Date.parse(expires.artifacts_expire_at!) - Date.now()) / 86_400_000;
    assert.ok(days > 6.9 && days < 7.1, `expire_in 1 week: ${expires.artifacts_expire_at}`);

    const test = await jobTrace(t, p, jobs.test.id);
    assert.match(test, /section_start:\d+:download_artifacts/);
    assert.match(test, /Downloading artifacts for build \(\d+\)/);
    assert.deepEqual([...(await storedArtifactFiles(t, jobs.test.id)).entries()], [['report/summary.txt', 'tested deep\n']]);

    const deploy = await jobTrace(t, p, jobs.deploy.id);
    assert.match(deploy, /built [0-9a-f]{8} from the sources\ntested deep\n/);
    assert.match(deploy, /token is \[MASKED\]/);
    assert.doesNotMatch(deploy, /^token is (?!\[MASKED\])/m);
    assert.match(runner.log(), new RegExp(`job ${jobs.deploy.id} received: "deploy" \\(stage deploy\\) of project ${p.fullPath} .*pipeline ${pipelineId}`));
    assert.match(runner.log(), new RegExp(`job ${jobs.deploy.id} succeeded`));
  });

  it('honours GIT_STRATEGY and GIT_DEPTH, and never writes the job token into the build directory', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, { 'a.txt': 'one\n' });
    await pushFiles(t, p, { 'a.txt': 'two\n' });
    await pushFiles(t, p, {
      '.gitlab-ci.yml': `
shallow:
  variables: {GIT_STRATEGY: clone, GIT_DEPTH: "1"}
  script: [echo "commits $(git rev-list --count HEAD)", cat a.txt]
full:
  variables: {GIT_DEPTH: "0"}
  script: [echo "commits $(git rev-list --count HEAD)"]
nosource:
  variables: {GIT_STRATEGY: none}
  script: [echo "no sources here"]
big-output:
  script: ["head -c 700000 /dev/zero | tr '\\\\0' x", echo, echo the end]
`,
    });
    const pipeline = await createPipeline(t, p);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const jobs = await jobsByName(t, p, pipeline.id);
    const shallow = await jobTrace(t, p, jobs.shallow.id);
    assert.match(shallow, /Created fresh repository/);
    assert.match(shallow, /\ncommits 1\n/);
    assert.match(shallow, /\ntwo\n/);
    assert.match(await jobTrace(t, p, jobs.full.id), /\ncommits 3\n/);
    const none = await jobTrace(t, p, jobs.nosource.id);
    assert.match(none, /Skipping Git repository setup/);
    assert.match(none, /no sources here/);
    // More than one append's worth of log, all of it on the server in order.
    const big = await jobTrace(t, p, jobs['big-output'].id);
    assert.match(big, /\$ head -c 700000[^\n]*\n(x{700000})\x1b\[32;1m\$ echo/);
    assert.match(big, /\nthe end\n/);
    const configs: string[] = [];
    for await (const f of fs.glob('**/.git/config', { cwd: path.join(home, 'runner', 'builds') })) configs.push(f);
    assert.ok(configs.length > 0);
    for (const f of configs) assert.doesNotMatch(await fs.readFile(path.join(home, 'runner', 'builds', f), 'utf8'), /gitlab-ci-token|@127\.0\.0\.1/);
  });

  it('checks out a job\'s commit at GIT_DEPTH 1 after its branch has moved on', async () => {
    const p = await createCiProject(t);
    const sha = await pushFiles(t, p, {
      'a.txt': 'old\n',
      '.gitlab-ci.yml': `
stages: [wait, check]
wait:
  stage: wait
  script: [sleep 3]
check:
  stage: check
  variables: {GIT_STRATEGY: clone, GIT_DEPTH: "1"}
  script: [test "$(git rev-parse HEAD)" = "$CI_COMMIT_SHA", cat a.txt]
`,
    });
    const pipeline = await createPipeline(t, p);
    // While the first stage runs, a newer commit lands on the branch: a shallow fetch of the
    // branch alone no longer holds the pipeline's commit.
    await pushFiles(t, p, { 'a.txt': 'new\n' });
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const check = await jobTrace(t, p, (await jobsByName(t, p, pipeline.id)).check.id);
    assert.match(check, new RegExp(`Checking out ${sha.slice(0, 8)}`));
    assert.match(check, /\nold\n/);
  });

  it('checks out a job\'s commit at GIT_DEPTH 1 after its branch was deleted, through the pipeline\'s ref, gone once the pipeline ends', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, { 'README.md': 'main\n' });
    const sha = await pushFiles(t, p, {
      'a.txt': 'doomed\n',
      '.gitlab-ci.yml': `
stages: [wait, check]
wait:
  stage: wait
  script:
    - sleep 2
check:
  stage: check
  variables: {GIT_STRATEGY: clone, GIT_DEPTH: "1"}
  script:
    - test "$(git rev-parse HEAD)" = "$CI_COMMIT_SHA"
    - test "$(git rev-parse refs/pipelines/$CI_PIPELINE_ID)" = "$CI_COMMIT_SHA"
    - cat a.txt
`,
    }, { branch: 'doomed' });
    const pipeline = await createPipeline(t, p, 'doomed');
    // The branch goes before the second stage's job starts: only refs/pipelines/<id> holds the commit.
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.project.id}/repository/branches/doomed`, token: p.ownerToken });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal((await waitForPipeline(t, p, pipeline.id)).status, 'success');
    const check = await jobTrace(t, p, (await jobsByName(t, p, pipeline.id)).check.id);
    assert.match(check, /Fetching the pipeline ref alone/);
    assert.match(check, new RegExp(`Checking out ${sha.slice(0, 8)}`));
    assert.match(check, /\ndoomed\n/);
    // The pipeline completed: its ref is deleted (Ci::Pipeline's transition to a completed status).
    await waitFor('the pipeline ref to go', async () => (await refTarget(p.gitDir, `refs/pipelines/${pipeline.id}`)) === null || undefined);
  });

  it('a failing job with allow_failure lets the pipeline go on; on_failure jobs run after a failure', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': `
stages: [test, deploy]
flaky:
  stage: test
  script: [echo about to fail, exit 3]
  allow_failure: true
broken:
  stage: test
  script:
    - echo one
    - false | cat
    - echo "pipefail makes the line above fail, so this never prints"
  artifacts:
    when: on_failure
    paths: [debug.log]
  after_script: [echo cleanup after $CI_JOB_STATUS]
notify:
  stage: deploy
  when: on_failure
  script: [echo notified]
ship:
  stage: deploy
  script: [echo shipped]
`,
    });
    const pipeline = await waitForPipeline(t, p, pipelineId);
    const jobs = await jobsByName(t, p, pipelineId);
    assert.equal(pipeline.status, 'failed');
    assert.equal(jobs.flaky.status, 'failed');
    assert.equal(jobs.flaky.allow_failure, true);
    assert.equal(jobs.flaky.failure_reason, 'script_failure');
    assert.equal(jobs.broken.status, 'failed');
    assert.equal(jobs.broken.failure_reason, 'script_failure');
    assert.equal(jobs.notify.status, 'success');
    assert.equal(jobs.ship.status, 'skipped');
    const flaky = await jobTrace(t, p, jobs.flaky.id);
    assert.match(flaky, /about to fail\n/);
    assert.match(flaky, /ERROR: Job failed: exit code 3/);
    const broken = await jobTrace(t, p, jobs.broken.id);
    assert.doesNotMatch(broken, /this never prints\n/);
    assert.match(broken, /cleanup after failed/);
    assert.match(broken, /section_start:\d+:upload_artifacts_on_failure/);
    assert.match(broken, /debug\.log: no matching files/);
    assert.match(await jobTrace(t, p, jobs.notify.id), /notified/);
  });

  it('runs a manual job once it is played through the API', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': `
build:
  stage: build
  script: [echo built]
release:
  stage: deploy
  when: manual
  script: [echo "released by $GITLAB_USER_LOGIN" ; echo "manual is $CI_JOB_MANUAL"]
`,
    });
    await waitFor('the build job', async () => (await jobsByName(t, p, pipelineId)).build.status === 'success');
    const before = await jobsByName(t, p, pipelineId);
    assert.equal(before.release.status, 'manual');
    const played = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/jobs/${before.release.id}/play`, token: p.ownerToken });
    assert.equal(played.statusCode, 200, played.body);
    await waitFor('the manual job', async () => (await jobsByName(t, p, pipelineId)).release.status === 'success');
    assert.match(await jobTrace(t, p, before.release.id), /manual is true/);
  });

  it('stops a canceled job within seconds and kills its processes', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': 'long:\n  script:\n    - echo started\n    - sleep 1234 &\n    - wait\n    - echo never\n',
    });
    const job = await waitFor('the long job to run', async () => {
      const j = (await jobsByName(t, p, pipelineId)).long;
      return j.status === 'running' && (await jobTrace(t, p, j.id)).includes('started') ? j : null;
    });
    assert.ok(sleepers().length > 0, 'the job started its sleep');
    const canceledAt = Date.now();
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/jobs/${job.id}/cancel`, token: p.ownerToken });
    assert.equal(res.statusCode, 201, res.body);
    await waitFor('the runner to notice the cancel', async () => runner.log().includes(`job ${job.id} was canceled on the server`), 15_000);
    assert.ok(Date.now() - canceledAt < 10_000, 'noticed within a few seconds');
    await waitFor('the sleep to be killed', async () => sleepers().length === 0, 5000);
    assert.equal((await jobsByName(t, p, pipelineId)).long.status, 'canceled');
    assert.doesNotMatch(await jobTrace(t, p, job.id), /never/);
  });

  it('fails a job that runs past its timeout with job_execution_timeout', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': 'slow:\n  timeout: 3 seconds\n  script:\n    - echo begin\n    - sleep 30\n    - echo end\n',
    });
    const started = Date.now();
    await waitForPipeline(t, p, pipelineId);
    const jobs = await jobsByName(t, p, pipelineId);
    assert.equal(jobs.slow.status, 'failed');
    assert.equal(jobs.slow.failure_reason, 'job_execution_timeout');
    assert.ok(Date.now() - started < 20_000);
    const trace = await jobTrace(t, p, jobs.slow.id);
    assert.match(trace, /begin\n/);
    assert.doesNotMatch(trace, /\nend\n/);
    assert.match(trace, /ERROR: Job failed: execution took longer than 3s seconds/);
  });

  it('runs up to `concurrent` jobs at once', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': ['a', 'b', 'c', 'd'].map((n) => `${n}:\n  script: [sleep 3]\n`).join(''),
    });
    const pipeline = await waitForPipeline(t, p, pipelineId);
    assert.equal(pipeline.status, 'success');
    const jobs = Object.values(await jobsByName(t, p, pipelineId));
    const lastStart = Math.max(...jobs.map((j) => Date.parse(j.started_at!)));
    const firstEnd = Math.min(...jobs.map((j) => Date.parse(j.finished_at!)));
    assert.ok(lastStart < firstEnd, 'all four ran at the same time');
  });

  it('fails a job that needs an image at once, with runner_system_failure, when no Docker daemon is reachable', async () => {
    const { p, pipelineId } = await project(t, {
      '.gitlab-ci.yml': 'in-container:\n  image: alpine:3.20\n  script: [echo "must not run on the host" > /tmp/kiln-runner-host-marker]\n',
    });
    await waitForPipeline(t, p, pipelineId);
    const job = (await jobsByName(t, p, pipelineId))['in-container'];
    assert.equal(job.status, 'failed');
    assert.equal(job.failure_reason, 'runner_system_failure');
    const trace = await jobTrace(t, p, job.id);
    assert.match(trace, /ERROR: Job failed \(system failure\): this job needs the image "alpine:3\.20", but no Docker daemon is reachable/);
    assert.doesNotMatch(trace, /section_start:\d+:step_script/);
  });

  it('finishes running jobs on SIGTERM, stops at once on a second signal; --once runs one job; unregister removes it', async () => {
    const { p, pipelineId } = await project(t, { '.gitlab-ci.yml': 'short:\n  script: [sleep 2, echo finished]\n' });
    const job = await waitFor('the job to run', async () => {
      const j = (await jobsByName(t, p, pipelineId)).short;
      return j.status === 'running' ? j : null;
    });
    runner.child.kill('SIGTERM');
    assert.equal(await runner.exited, 0);
    assert.equal((await jobsByName(t, p, pipelineId)).short.status, 'success');
    assert.match(runner.log(), /SIGTERM received: no new jobs/);
    assert.match(runner.log(), new RegExp(`job ${job.id} succeeded`));

    // A second signal aborts the running job and reports it as a system failure.
    const second = await project(t, { '.gitlab-ci.yml': 'stuck:\n  script: [sleep 1234]\n' });
    runner = startRunner(home, ['--config', config]);
    const stuck = await waitFor('the stuck job to run', async () => {
      const j = (await jobsByName(t, second.p, second.pipelineId)).stuck;
      return j.status === 'running' ? j : null;
    });
    runner.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    runner.child.kill('SIGTERM');
    assert.equal(await runner.exited, 0);
    const aborted = (await jobsByName(t, second.p, second.pipelineId)).stuck;
    assert.equal(aborted.status, 'failed');
    assert.equal(aborted.failure_reason, 'runner_system_failure');
    assert.match(await jobTrace(t, second.p, stuck.id), /the runner was stopped/);
    await waitFor('the sleep to be killed', async () => sleepers().length === 0, 5000);

    const third = await project(t, { '.gitlab-ci.yml': 'one:\n  script: [echo one]\n' });
    const once = await runnerCli(home, ['run', '--once', '--config', config]);
    assert.equal(once.code, 0, once.stderr);
    assert.equal((await jobsByName(t, third.p, third.pipelineId)).one.status, 'success');

    const gone = await runnerCli(home, ['unregister', '--all-runners', '--config', config]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.equal(await t.db.selectFrom('ci_runners').select('id').where('description', '=', 'test runner').executeTakeFirst(), undefined);
    assert.doesNotMatch(await fs.readFile(config, 'utf8'), /\[\[runners\]\]/);
  });
});
