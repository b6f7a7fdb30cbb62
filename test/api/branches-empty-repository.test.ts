/**
 * POST /projects/:id/repository/branches on a project with no commit (issue 35, item 6): the
 * Service's Branches::CreateService first commits an empty README.md ("Add README.md", by the
 * caller) on the default branch, then creates the branch from `ref` (201). kiln used to answer
 * `400 Invalid reference name: main`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { runGit } from '../../src/domain/repositories/git-command.ts';
import { projectRepository } from '../../src/domain/repositories/project-repository.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('branches in an empty repository', () => {
  let t: TestApp;
  let owner: UserRow;
  let token: string;

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { commit_email: null });
    token = await createToken(t.db, owner);
  });
  after(async () => { await t?.close(); });

  async function emptyProject(payload: Record<string, unknown> = {}) {
    const name = `Empty ${Math.random().toString(36).slice(2, 8)}`;
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name, ...payload } });
    assert.equal(res.statusCode, 201, res.body);
    const project = await t.db.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    return { id: project.id, gitDir: projectRepository(t.config.storages, project).gitDir };
  }
  const git = async (gitDir: string, ...args: string[]) => (await runGit(args, { gitDir, okExitCodes: [0, 1, 128] })).stdout;
  const createBranch = (id: number, branch: string, ref: string, as = token) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${id}/repository/branches`, token: as, payload: { branch, ref } });

  it('commits an empty README.md on the default branch, then creates the branch from it', async () => {
    const p = await emptyProject();
    const res = await createBranch(p.id, 'feature', 'main');
    assert.equal(res.statusCode, 201, res.body);
    const branch = res.json();
    assert.equal(branch.name, 'feature');
    assert.equal(branch.commit.title, 'Add README.md');
    assert.equal(branch.commit.author_name, owner.name);
    assert.equal(branch.commit.author_email, owner.email);
    assert.equal(branch.commit.committer_email, owner.email);
    assert.equal(branch.default, false);
    assert.equal(await git(p.gitDir, 'rev-parse', 'refs/heads/main'), await git(p.gitDir, 'rev-parse', 'refs/heads/feature'));
    assert.equal(await git(p.gitDir, 'ls-tree', '--name-only', 'main'), 'README.md\n');
    assert.equal(await git(p.gitDir, 'cat-file', '-s', 'main:README.md'), '0\n');
    assert.equal(await git(p.gitDir, 'rev-list', '--count', 'main'), '1\n');
    // The project has its default branch and is no longer empty.
    const project = (await t.request({ url: `/api/v4/projects/${p.id}`, token })).json();
    assert.deepEqual([project.default_branch, project.empty_repo], ['main', false]);
    const list = await t.request({ url: `/api/v4/projects/${p.id}/repository/branches`, token });
    const names = list.json().map((b: { name: string }) => b.name);
    assert.deepEqual(names, ['feature', 'main']);
    // A second branch adds no second README commit.
    assert.equal((await createBranch(p.id, 'other', 'feature')).statusCode, 201);
    assert.equal(await git(p.gitDir, 'rev-list', '--all', '--count'), '1\n');
  });

  it('uses the branch the project was made with', async () => {
    const p = await emptyProject({ default_branch: 'trunk' });
    const res = await createBranch(p.id, 'topic', 'trunk');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(await git(p.gitDir, 'ls-tree', '--name-only', 'trunk'), 'README.md\n');
    assert.equal(await git(p.gitDir, 'for-each-ref', '--format=%(refname)', 'refs/heads/'), 'refs/heads/topic\nrefs/heads/trunk\n');
  });

  it('keeps the README when the branch is then refused, as the Service does', async () => {
    const p = await emptyProject();
    const res = await createBranch(p.id, 'feature', 'nope');
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Invalid reference name: nope' }]);
    assert.equal(await git(p.gitDir, 'for-each-ref', '--format=%(refname)', 'refs/heads/'), 'refs/heads/main\n');
    const same = await emptyProject();
    const exists = await createBranch(same.id, 'main', 'main');
    assert.deepEqual([exists.statusCode, exists.json()], [400, { message: 'Branch already exists' }]);
  });

  it('commits nothing for a caller who may not push', async () => {
    const p = await emptyProject({ visibility: 'public' });
    const reporter = await createUser(t.db);
    await t.request({ method: 'POST', url: `/api/v4/projects/${p.id}/members`, token, payload: { user_id: reporter.id, access_level: 20 } });
    const res = await createBranch(p.id, 'feature', 'main', await createToken(t.db, reporter));
    assert.equal(res.statusCode, 403);
    assert.equal(await git(p.gitDir, 'for-each-ref', 'refs/heads/'), '');
  });
});
