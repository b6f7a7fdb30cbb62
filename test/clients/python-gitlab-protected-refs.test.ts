/**
 * python-gitlab 3.12 (Debian's python3-gitlab) runs test/clients/python/protected_refs_flow.py
 * against a listening kiln: its functional test of protected branches (create `*-stable`, list,
 * get by a wildcard name, delete), a Developer-pushable `release/*`, the 409 of a second
 * protection, and protected tags. The script exits non-zero on any mismatch; its report is checked here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = new URL('./python/protected_refs_flow.py', import.meta.url).pathname;

function runFlow(url: string, token: string, projectId: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, url, token, String(projectId)], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' }, timeout: 120_000, maxBuffer: 10 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('python-gitlab 3.12: protected branches and tags', () => {
  let t: ListeningTestApp;

  before(async () => { t = await startListeningApp(); });
  after(async () => { await t.close(); });

  it('runs the protected refs flow script to the end', async () => {
    const res = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'guarded', initialize_with_readme: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    const run = await runFlow(t.url, ROOT_TOKEN, res.json().id);
    assert.equal(run.code, 0, `protected_refs_flow.py failed:\n${run.stderr}\n${run.stdout}`);
    assert.deepEqual(JSON.parse(run.stdout.trim()), {
      conflict: "Protected branch 'release/*' already exists",
      branches: ['main', '*-stable', 'release/*'],
      branches_after_delete: ['main'],
      tags: ['v*'],
      tags_after_delete: [],
    });
  });
});
