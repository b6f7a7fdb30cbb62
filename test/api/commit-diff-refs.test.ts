/**
 * A commit's diff and refs (issue 30, item 4; lib/api/commits.rb of the Service 15.2): the Diff
 * entity file by file (added, changed, renamed, deleted, mode changes), pagination, the diff
 * limits of the application settings, and the branches and tags that contain a commit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

describe('commit diff and refs API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  const shas: Record<string, string> = {};

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    const commit = async (name: string, actions: unknown[], branch = 'main', extra: Record<string, unknown> = {}) => {
      const res = await t.request({
        method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
        payload: { branch, commit_message: name, actions, ...extra },
      });
      assert.equal(res.statusCode, 201, res.body);
      shas[name] = res.json().id as string;
    };
    await commit('root', [
      { action: 'create', file_path: 'README.md', content: 'one\ntwo\nthree\n' },
      { action: 'create', file_path: 'old name.txt', content: 'a\nb\nc\nd\ne\n' },
      { action: 'create', file_path: 'gone.txt', content: 'bye\n' },
      { action: 'create', file_path: 'run.sh', content: 'echo hi\n' },
    ]);
    await commit('change', [
      { action: 'update', file_path: 'README.md', content: 'one\n2\nthree\n' },
      { action: 'move', previous_path: 'old name.txt', file_path: 'new name.txt' },
      { action: 'delete', file_path: 'gone.txt' },
      { action: 'chmod', file_path: 'run.sh', execute_filemode: true },
      { action: 'create', file_path: 'bin.dat', content: Buffer.from([0, 1, 2, 3, 0]).toString('base64'), encoding: 'base64' },
    ]);
    await commit('side', [{ action: 'create', file_path: 'side.txt', content: 'x\n' }], 'feature', { start_branch: 'main' });
    const tag = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/tags`, token: people.tokens.owner,
      payload: { tag_name: 'v1', ref: shas.root },
    });
    assert.equal(tag.statusCode, 201, tag.body);
  });
  after(async () => { await t.close(); });

  const url = (sha: string, what: string, query = '') => `/api/v4/projects/${project}/repository/commits/${sha}/${what}${query}`;

  it('answers each changed file as the Diff entity, from the first hunk', async () => {
    const res = await t.request({ url: url(shas.change, 'diff'), token: people.tokens.reporter });
    assert.equal(res.statusCode, 200, res.body);
    const diffs = res.json() as Record<string, unknown>[];
    assert.deepEqual(Object.keys(diffs[0]), ['diff', 'new_path', 'old_path', 'a_mode', 'b_mode', 'new_file', 'renamed_file', 'deleted_file']);
    const byPath = new Map(diffs.map((d) => [d.new_path, d]));
    assert.deepEqual(byPath.get('README.md'), {
      diff: '@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n', new_path: 'README.md', old_path: 'README.md',
      a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false,
    });
    assert.deepEqual(byPath.get('new name.txt'), {
      diff: '', new_path: 'new name.txt', old_path: 'old name.txt',
      a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: true, deleted_file: false,
    });
    const gone = byPath.get('gone.txt')!;
    assert.deepEqual([gone.deleted_file, gone.a_mode, gone.b_mode, gone.diff], [true, '100644', '0', '@@ -1 +0,0 @@\n-bye\n']);
    const run = byPath.get('run.sh')!;
    assert.deepEqual([run.a_mode, run.b_mode, run.diff], ['100644', '100755', '']);
    const bin = byPath.get('bin.dat')!;
    assert.deepEqual([bin.new_file, bin.a_mode, bin.diff], [true, '0', 'Binary files /dev/null and b/bin.dat differ\n']);
    assert.equal(res.headers['x-total'], '5');
    // A root commit: every file is new.
    const root = (await t.request({ url: url(shas.root, 'diff'), token: people.tokens.reporter })).json();
    assert.equal(root.length, 4);
    assert.ok(root.every((d: { new_file: boolean }) => d.new_file));
    // Pages, and a branch name for the commit.
    const page = await t.request({ url: url('main', 'diff', '?per_page=2&page=3'), token: people.tokens.reporter });
    assert.equal(page.json().length, 1);
    assert.equal(page.headers['x-total-pages'], '3');
  });

  it('stops at the diff limits of the application settings', async () => {
    const files = Array.from({ length: 520 }, (_, i) => ({ action: 'create', file_path: `many/f${i}.txt`, content: `${i}\n` }));
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch: 'many', start_branch: 'main', commit_message: 'many', actions: files },
    });
    assert.equal(res.statusCode, 201, res.body);
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { diff_max_files: 500 } });
    assert.equal(set.statusCode, 200, set.body);
    try {
      const diff = await t.request({ url: url(res.json().id, 'diff', '?per_page=100&page=6'), token: people.tokens.reporter });
      assert.equal(diff.headers['x-total'], '500');
    } finally {
      await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { diff_max_files: 1000 } });
    }
  });

  it('lists the branches and tags that contain a commit', async () => {
    const all = await t.request({ url: url(shas.root, 'refs'), token: people.tokens.reporter });
    assert.equal(all.statusCode, 200, all.body);
    const names = all.json().map((r: { type: string; name: string }) => `${r.type}:${r.name}`);
    assert.deepEqual(names.filter((n: string) => !n.startsWith('branch:many')), ['branch:feature', 'branch:main', 'tag:v1']);
    assert.deepEqual((await t.request({ url: url(shas.side, 'refs', '?type=branch'), token: people.tokens.reporter })).json(),
      [{ type: 'branch', name: 'feature' }]);
    assert.deepEqual((await t.request({ url: url(shas.change, 'refs', '?type=tag'), token: people.tokens.reporter })).json(), []);
    const bad = await t.request({ url: url(shas.root, 'refs', '?type=nope'), token: people.tokens.reporter });
    assert.deepEqual(bad.json(), { error: 'type does not have a valid value' });
  });

  it('answers 404 for what is not there or not readable', async () => {
    for (const what of ['diff', 'refs']) {
      assert.deepEqual((await t.request({ url: url('f'.repeat(40), what), token: people.tokens.reporter })).json(), { message: '404 Commit Not Found' });
      assert.deepEqual((await t.request({ url: url('--all', what), token: people.tokens.reporter })).json(), { message: '404 Commit Not Found' });
      assert.equal((await t.request({ url: url(shas.root, what), token: people.tokens.nonMember })).statusCode, 404);
      assert.equal((await t.request({ url: url(shas.root, what), token: people.tokens.guest })).statusCode, 403);
    }
  });
});
