/**
 * python-gitlab 3.12 (Debian's python3-gitlab) against the job artifacts API:
 * test/clients/python/artifacts_flow.py downloads a job's archive (whole and streamed), one file
 * of it, the ref's latest archive and file, keeps and deletes the artifacts; its JSON report is
 * checked against what the runner uploaded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import { makeZip } from '../helpers/zip.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = new URL('./python/artifacts_flow.py', import.meta.url).pathname;

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });
}

describe('python-gitlab 3.12: job artifacts', () => {
  let t: ListeningTestApp;
  before(async () => { t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN }); });
  after(async () => { await t.close(); });

  it('downloads, reads one file, keeps and deletes a job\'s artifacts', async () => {
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: make\n' });
    const runner = await TestRunner.register(t);
    await createPipeline(t, p);
    const job = await runner.requestJob();
    const zip = await makeZip({ 'out/report.txt': 'from python\n', 'big.bin': crypto.randomBytes(200_000) });
    assert.equal((await runner.uploadArtifact(job, zip, { expireIn: '1 week' })).statusCode, 201);
    assert.equal((await runner.update(job, 'success')).statusCode, 200);

    const result = await run([t.url, p.ownerToken, String(p.project.id), String(job.id)]);
    assert.equal(result.code, 0, `artifacts_flow.py failed:\n${result.stderr}\n${result.stdout}`);
    const report = JSON.parse(result.stdout.trim());
    const sha = crypto.createHash('sha256').update(zip).digest('hex');
    assert.ok(report.expire_before_keep);
    assert.deepEqual(report.archive, { size: zip.length, sha256: sha });
    assert.equal(report.archive_streamed_sha256, sha);
    assert.equal(report.entry, 'from python\n');
    assert.equal(report.by_ref, sha);
    assert.equal(report.raw_by_ref, 'from python\n');
    assert.equal(report.missing, 404);
    assert.equal(report.expire_after_keep, null);
    assert.equal(report.after_delete, 404);
    assert.deepEqual(await t.db.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', job.id).execute(), []);
  });
});
