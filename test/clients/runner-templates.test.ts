/**
 * kiln's built-in CI templates run for real (issue 32, item 5): a project whose `.gitlab-ci.yml`
 * only includes a template, taken by `kiln runner` (shell executor) as its own process. The Bash
 * template checks and runs the project's scripts, the Python one its unit tests in a virtual
 * environment; both with the tools this machine has (bash, python3 with venv), no network.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import {
  fakeDocker, jobsByName, jobTrace, register, scratchHome, startRunner, waitForPipeline, type RunnerDaemon,
} from '../runner/helpers.ts';

const REGISTRATION_TOKEN = 'kiln-runner-templates-registration-token';

// A python3 shim of a version manager finds its versions under the real HOME; the runner has its
// own HOME, so it is given the system's python3 (the directories of PATH without such shims).
const PATH = (process.env.PATH ?? '').split(':').filter((d) => !d.includes('/shims')).join(':');

describe('built-in CI templates under kiln runner', () => {
  let t: ListeningTestApp;
  let home: string;
  let runner: RunnerDaemon;
  let docker: Awaited<ReturnType<typeof fakeDocker>>;

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    home = await scratchHome();
    docker = await fakeDocker(home);
    const config = await register(t, home, REGISTRATION_TOKEN, ['--concurrent', '2', '--executor', 'docker', '--docker-image', 'debian:12']);
    runner = startRunner(home, ['--config', config], { ...docker.env, PATH: `${docker.env.PATH!.split(':')[0]}:${PATH}` });
  });

  after(async () => {
    await runner?.stop('SIGTERM');
    await docker?.close();
    await t?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  async function run(files: Record<string, string>) {
    const p = await createCiProject(t);
    await pushFiles(t, p, files);
    const pipeline = await createPipeline(t, p);
    const done = await waitForPipeline(t, p, pipeline.id, 180_000);
    const jobs = await jobsByName(t, p, pipeline.id);
    const traces = Object.fromEntries(await Promise.all(Object.values(jobs).map(async (j) => [j.name, await jobTrace(t, p, j.id)] as const)));
    return { status: done.status, jobs, traces };
  }

  it('runs the Bash template: syntax of every script, shellcheck where installed, tests/*.sh', async () => {
    const { status, jobs, traces } = await run({
      '.gitlab-ci.yml': 'include:\n  - template: Bash.gitlab-ci.yml\n',
      'bin/greet.sh': '#!/usr/bin/env bash\necho "hello, ${1:-world}"\n',
      'tests/greet.sh': '#!/usr/bin/env bash\nset -e\n[ "$(bash bin/greet.sh kiln)" = "hello, kiln" ]\necho "greeting checked"\n',
    });
    assert.equal(status, 'success', JSON.stringify(jobs) + runner.log());
    assert.deepEqual(Object.fromEntries(Object.values(jobs).map((j) => [j.name, j.status])), { syntax: 'success', shellcheck: 'success', tests: 'success' });
    assert.match(traces.tests, /running tests\/greet\.sh/);
    assert.match(traces.tests, /greeting checked/);
    assert.match(traces.syntax, /Using Docker executor with image bash:5/);
    assert.match(traces.shellcheck, /Using Docker executor with image koalaman\/shellcheck-alpine:stable/);
  });

  it('fails the Bash template on a script that does not parse', async () => {
    const { status, jobs, traces } = await run({
      '.gitlab-ci.yml': 'include:\n  - template: Bash.gitlab-ci.yml\n',
      'broken.sh': 'if then fi (\n',
    });
    assert.equal(status, 'failed');
    assert.equal(jobs.syntax.status, 'failed');
    assert.match(traces.syntax, /broken\.sh/);
  });

  it('runs the Python template: unit tests in a virtual environment', async () => {
    const { status, jobs, traces } = await run({
      '.gitlab-ci.yml': 'include:\n  - template: Python.gitlab-ci.yml\n',
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'test_calc.py': 'import unittest\nimport calc\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n',
    });
    assert.equal(status, 'success', JSON.stringify(jobs) + Object.values(traces).join('\n') + runner.log());
    // No pyproject.toml or setup.py: the build job is not created.
    assert.deepEqual(Object.keys(jobs), ['test']);
    assert.match(traces.test, /test_add \(test_calc\.AddTest/);
    assert.match(traces.test, /\nOK\n/);
  });
});
