/**
 * python-gitlab 3.12 (Debian's python3-gitlab, installed by .ci/run) drives CI/CD variables at
 * three levels, pipelines created with variables, cancel, retry, delete, and trigger tokens
 * (test/clients/python/ci_flow.py, issue 20); then a runner takes the pipelines' jobs and
 * receives the variables the client set.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, pushFiles } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = new URL('./python/ci_flow.py', import.meta.url).pathname;

interface CiReport {
  instance_keys: string[];
  project_keys: string[];
  kept: number;
  kept_variables: [string, string, string][];
  deleted: number;
  triggered: number;
  triggered_variables: string[];
}

function runFlow(url: string, projectId: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, url, ROOT_TOKEN, String(projectId)], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 120_000,
      maxBuffer: 10 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('python-gitlab 3.12: CI/CD variables, pipelines and triggers', () => {
  let t: ListeningTestApp;

  before(async () => { t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN }); });
  after(async () => { await t.close(); });

  it('runs the CI flow script to the end, and the jobs receive what it set', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: echo build\n' });
    const run = await runFlow(t.url, p.project.id);
    assert.equal(run.code, 0, `ci_flow.py failed:\n${run.stderr}\n${run.stdout}`);
    const report = JSON.parse(run.stdout.trim()) as CiReport;

    assert.deepEqual(report.instance_keys, ['PY_INSTANCE']);
    assert.deepEqual(report.project_keys, ['PY_PROJECT']);
    assert.deepEqual(report.kept_variables, [['PY_PIPELINE', 'from-pipeline', 'env_var'], ['PY_FILE', 'file-content', 'file']]);
    assert.deepEqual(report.triggered_variables, ['PY_TRIGGERED', 'TRIGGER_PAYLOAD']);
    assert.equal(await t.db.selectFrom('ci_pipelines').select('id').where('id', '=', report.deleted).executeTakeFirst(), undefined);
    assert.equal(await t.db.selectFrom('ci_triggers').select('id').executeTakeFirst(), undefined);
    const stored = await t.db.selectFrom('ci_variables').select('encrypted_value').execute();
    assert.ok(stored.every((r) => r.encrypted_value.startsWith('v1:') && !r.encrypted_value.includes('secret-value')));

    const runner = await TestRunner.register(t);
    const first = await runner.requestJob();
    const vars = Object.fromEntries(first.variables.map((v) => [v.key, v]));
    assert.equal(first.job_info.id > 0, true);
    assert.equal(vars.PY_INSTANCE.value, 'from-instance-2');
    assert.deepEqual(vars.PY_PROJECT, { key: 'PY_PROJECT', value: 'secret-value-123', public: false, masked: true });
    assert.equal(vars.PY_PIPELINE.value, 'from-pipeline');
    assert.equal(vars.PY_FILE.file, true);
    await runner.update(first, 'success');
    const second = await runner.requestJob();
    assert.equal(second.variables.find((v) => v.key === 'PY_TRIGGERED')?.value, 'yes');
    assert.equal(second.variables.find((v) => v.key === 'CI_PIPELINE_SOURCE')?.value, 'trigger');
    await runner.update(second, 'success');
    assert.equal(await runner.request(), null);
  });
});
