/**
 * The `gitlab` Ruby gem (Debian's ruby-gitlab, installed by .ci/run) runs
 * test/clients/ruby/repository_flow.rb against a listening kiln (issue 20): a group and a
 * sub-group edited and listed, a project in the sub-group, a commit of several actions, files
 * created, edited and removed, branches, tags, the tree, and the group deleted. The script stops
 * at the first unexpected answer; its report is checked here against git and the database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

const SCRIPT = new URL('./ruby/repository_flow.rb', import.meta.url).pathname;

function runFlow(url: string, token: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/ruby', [SCRIPT, url, token], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' },
      timeout: 120_000,
      maxBuffer: 10 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('the gitlab Ruby gem', () => {
  let t: ListeningTestApp;

  before(async () => { t = await startListeningApp(); });
  after(async () => { await t.close(); });

  it('drives groups, namespaces and repository content to the end', async () => {
    const run = await runFlow(t.url, ROOT_TOKEN);
    assert.equal(run.code, 0, `repository_flow.rb failed:\n${run.stderr}\n${run.stdout}`);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!);
    assert.match(report.version, /^4\./);
    assert.deepEqual(report.namespaces, ['ruby-team', 'ruby-team/ruby-sub']);
    assert.deepEqual(report.tree, ['bin', 'docs', 'README.md', 'bin/two', 'docs/new file.md']);
    assert.deepEqual(report.branches, ['gem-branch', 'gem/feature', 'main']);
    assert.deepEqual(report.tags, [['light', null], ['v1.0.0', 'Release from Ruby']]);
    assert.equal(report.bad_branch, 'Branch name is invalid');
    assert.equal(report.deleted, '202 Accepted');
    assert.equal(report.gone, true);
    assert.match(report.commit, /^[0-9a-f]{40}$/);
    // The group went with its sub-group and project; the job removes the repository.
    const left = await t.db.selectFrom('namespaces').select('id').where('path', 'in', ['ruby-team', 'ruby-sub']).execute();
    assert.deepEqual(left, []);
    const repo = path.join(t.dataDir, 'repositories', 'ruby-team', 'ruby-sub', 'gem-project.git');
    for (let i = 0; i < 200; i += 1) {
      try {
        execFileSync('test', ['-d', repo]);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`the repository was not removed: ${repo}`);
  });
});
