/**
 * gitlabracadabra (Debian's package, installed by .ci/run) applies
 * test/clients/gitlabracadabra/kiln.yml to a listening kiln twice (issue 20): groups, sub-groups,
 * projects in them with descriptions and visibilities, and branches created in order. The first
 * run creates and configures; the second must find nothing to change. Both runs are checked
 * against the database and the repositories.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { tempDir } from '../helpers/git.ts';

const ACTION_FILE = new URL('./gitlabracadabra/kiln.yml', import.meta.url).pathname;

function apply(home: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/gitlabracadabra', ['--verbose', ACTION_FILE], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 180_000,
      maxBuffer: 10 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** What a run reports doing: creations, changes, errors (gitlabracadabra logs each at INFO or above). */
function actions(output: string): string[] {
  return output.split('\n').filter((l) => /Creating|Changing|changing|Deleting|Renaming|NOT |ERROR|Error|Traceback/.test(l));
}

describe('gitlabracadabra', () => {
  let t: ListeningTestApp;
  let home: string;

  before(async () => {
    t = await startListeningApp();
    home = await tempDir('kiln-racadabra-');
    await fs.writeFile(path.join(home, '.python-gitlab.cfg'), `[global]\ndefault = kiln\n\n[kiln]\nurl = ${t.url}\nprivate_token = ${ROOT_TOKEN}\napi_version = 4\n`);
  });
  after(async () => {
    await t.close();
    await fs.rm(home, { recursive: true, force: true });
  });

  it('applies the same file twice, the second run changing nothing', async () => {
    const first = await apply(home);
    assert.equal(first.code, 0, first.output);
    const done = actions(first.output);
    assert.ok(done.some((l) => l.includes('[racadabra/platform/tools/cli] Creating project')), first.output);
    assert.ok(!done.some((l) => /NOT |ERROR|Error|Traceback/.test(l)), first.output);

    const groups = await t.db.selectFrom('namespaces').select(['path', 'name', 'description', 'visibility_level', 'parent_id']).where('kind', '=', 'group').orderBy('id').execute();
    assert.deepEqual(groups.map((g) => [g.path, g.name, g.description, g.visibility_level]), [
      ['racadabra', 'Racadabra', 'Groups and projects managed from YAML', 10],
      ['platform', 'Platform', 'A sub-group', 10],
      ['tools', 'Tools', 'A sub-sub-group', 0],
    ]);
    const projects = await t.db.selectFrom('projects').select(['path', 'description', 'visibility_level', 'default_branch', 'disk_path', 'repository_storage']).orderBy('id').execute();
    assert.deepEqual(projects.map((p) => [p.path, p.description, p.visibility_level, p.default_branch]), [
      ['app', 'The application', 10, 'main'],
      ['library', 'A library in a sub-group', 0, 'main'],
      ['cli', 'A project two levels down', 0, null],
    ]);
    const branches = (diskPath: string) => execFileSync('git', ['--git-dir', path.join(t.dataDir, 'repositories', diskPath), 'for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(branches(projects[0].disk_path), ['develop', 'main', 'release/1.0']);
    assert.deepEqual(branches(projects[1].disk_path), ['main', 'stable']);

    const second = await apply(home);
    assert.equal(second.code, 0, second.output);
    assert.deepEqual(actions(second.output), [], `the second run changed something:\n${second.output}`);
  });
});
