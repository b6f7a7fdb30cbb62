/**
 * Protected branches and tags (issue 30, item 3): the API (list, search, show by wildcard name,
 * protect, 409 on a second protection, CE's access levels only, Premium parameters ignored,
 * allow_force_push changed, unprotect, Maintainer-only), the default branch protected when it
 * comes to be, refusals of API writes (files, commits, branches, tags) with the Service's
 * messages, the real git CLI refused by the pre-receive check (push, force push, deletion, tags,
 * an empty repository), and protected variables and runners reaching only protected refs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { cloneUrl, git, startListeningApp, tempDir } from '../helpers/git.ts';
import { pushFiles, type CiProject } from '../helpers/ci.ts';
import { TestRunner } from '../helpers/test-runner.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';
import { setSetting } from '../../src/domain/settings/settings.ts';
import type { TestApp } from '../helpers/app.ts';

const PUSH_DENIED = 'You are not allowed to push code to protected branches on this project.';
const FORCE_DENIED = 'You are not allowed to force push code to a protected branch on this project.';
const DELETE_DENIED = 'You are not allowed to delete protected branches from this project. '
  + 'Only a project maintainer or owner can delete a protected branch.';

describe('protected branches and tags', () => {
  let t: TestApp & { baseUrl: string };
  let work: string;
  let owner: UserRow;
  let ownerToken: string;
  let maintainer: UserRow;
  let maintainerToken: string;
  let developer: UserRow;
  let developerToken: string;
  let project: { id: number; path_with_namespace: string };
  let seq = 0;

  before(async () => {
    t = await startListeningApp();
    work = await tempDir();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
    maintainer = await createUser(t.db);
    maintainerToken = await createToken(t.db, maintainer, { scopes: ['api'] });
    developer = await createUser(t.db);
    developerToken = await createToken(t.db, developer, { scopes: ['api'] });
    project = await createProject({ initialize_with_readme: true });
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function createProject(payload: Record<string, unknown>) {
    seq += 1;
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: `guarded-${seq}`, ...payload } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json() as { id: number; path_with_namespace: string };
    for (const [user, level] of [[maintainer, 40], [developer, 30]] as const) {
      const m = await t.request({
        method: 'POST', url: `/api/v4/projects/${created.id}/members`, token: ownerToken, payload: { user_id: user.id, access_level: level },
      });
      assert.equal(m.statusCode, 201, m.body);
    }
    return created;
  }

  const api = (id: number) => `/api/v4/projects/${id}`;
  const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, token: string, payload?: Record<string, unknown>) =>
    t.request({ method, url, token, ...(payload ? { payload } : {}) });

  async function clone(user: UserRow, token: string, name: string, p = project) {
    const dir = path.join(work, `${name}-${seq++}`);
    const r = await git(['clone', '-q', cloneUrl(t.baseUrl, p.path_with_namespace, { username: user.username, password: token }), dir], work);
    assert.equal(r.code, 0, r.stderr);
    return dir;
  }

  async function commit(dir: string, file: string, content = `${file}\n`) {
    await fs.writeFile(path.join(dir, file), content);
    assert.equal((await git(['add', file], dir)).code, 0);
    const r = await git(['commit', '-q', '-m', `add ${file}`], dir);
    assert.equal(r.code, 0, r.stderr);
  }

  it('protects the default branch when a project is made with a README (default_branch_protection 2)', async () => {
    const res = await req('GET', `${api(project.id)}/protected_branches`, maintainerToken);
    assert.equal(res.statusCode, 200, res.body);
    const [main] = res.json() as { id: number; push_access_levels: { id: number }[]; merge_access_levels: { id: number }[] }[];
    assert.deepEqual(res.json(), [{
      id: main.id, name: 'main',
      push_access_levels: [{ id: main.push_access_levels[0].id, access_level: 40, access_level_description: 'Maintainers' }],
      merge_access_levels: [{ id: main.merge_access_levels[0].id, access_level: 40, access_level_description: 'Maintainers' }],
      allow_force_push: false,
    }]);
    const branch = (await req('GET', `${api(project.id)}/repository/branches/main`, developerToken)).json();
    assert.deepEqual(
      [branch.protected, branch.developers_can_push, branch.developers_can_merge, branch.can_push],
      [true, false, false, false],
    );
    assert.equal((await req('GET', `${api(project.id)}/repository/branches/main`, maintainerToken)).json().can_push, true);
  });

  it('protects, lists, searches, shows, changes and unprotects branches (Maintainer only)', async () => {
    const base = `${api(project.id)}/protected_branches`;
    let res = await req('POST', base, maintainerToken, {
      name: 'release-*', push_access_level: 30, merge_access_level: 0, allow_force_push: true,
      // Premium parameters: CE does not declare them, so they change nothing.
      allowed_to_push: [{ user_id: developer.id }], code_owner_approval_required: true, unprotect_access_level: 40,
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.deepEqual(Object.keys(created), ['id', 'name', 'push_access_levels', 'merge_access_levels', 'allow_force_push']);
    assert.equal(created.name, 'release-*');
    assert.deepEqual(created.push_access_levels.map((l: { access_level: number; access_level_description: string }) => [
      l.access_level, l.access_level_description,
    ]), [[30, 'Developers + Maintainers']]);
    assert.deepEqual(created.merge_access_levels.map((l: { access_level_description: string }) => l.access_level_description), ['No one']);
    assert.equal(created.allow_force_push, true);

    res = await req('POST', base, maintainerToken, { name: 'release-*' });
    assert.deepEqual([res.statusCode, res.json()], [409, { message: "Protected branch 'release-*' already exists" }]);
    res = await req('POST', base, maintainerToken, { name: 'x', push_access_level: 60, merge_access_level: 20 });
    assert.deepEqual([res.statusCode, res.json()], [400, {
      error: 'push_access_level does not have a valid value, merge_access_level does not have a valid value',
    }]);
    res = await req('POST', base, maintainerToken, {});
    assert.equal(res.statusCode, 400);
    // Defaults: Maintainers push and merge, no force pushes.
    res = await req('POST', base, maintainerToken, { name: 'feature/guarded' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().push_access_levels[0].access_level, res.json().merge_access_levels[0].access_level, res.json().allow_force_push],
      [40, 40, false]);

    res = await req('GET', `${base}?search=RELEASE`, maintainerToken);
    assert.deepEqual(res.json().map((b: { name: string }) => b.name), ['release-*']);
    res = await req('GET', `${base}?per_page=2`, maintainerToken);
    assert.deepEqual(res.json().map((b: { name: string }) => b.name), ['main', 'release-*']);
    assert.equal(res.headers['x-total'], '3');
    res = await req('GET', `${base}/${encodeURIComponent('feature/guarded')}`, maintainerToken);
    assert.equal(res.json().name, 'feature/guarded');
    res = await req('GET', `${base}/release-*`, maintainerToken);
    assert.equal(res.json().name, 'release-*');
    res = await req('GET', `${base}/release-1`, maintainerToken);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);

    res = await req('PATCH', `${base}/release-*`, maintainerToken, { allow_force_push: false });
    assert.deepEqual([res.statusCode, res.json().allow_force_push], [200, false]);

    // Developers may not read or change protection; strangers do not see the private project.
    assert.equal((await req('GET', base, developerToken)).statusCode, 403);
    assert.equal((await req('POST', base, developerToken, { name: 'dev-*' })).statusCode, 403);
    assert.equal((await req('DELETE', `${base}/main`, developerToken)).statusCode, 403);
    const stranger = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
    assert.equal((await req('GET', base, stranger)).statusCode, 404);
    assert.equal((await t.request({ method: 'POST', url: base, payload: { name: 'anon' } })).statusCode, 401);

    res = await req('DELETE', `${base}/${encodeURIComponent('feature/guarded')}`, maintainerToken);
    assert.equal(res.statusCode, 204);
    assert.equal((await req('DELETE', `${base}/${encodeURIComponent('feature/guarded')}`, maintainerToken)).statusCode, 404);
  });

  it('protects, lists, shows and unprotects tags', async () => {
    const base = `${api(project.id)}/protected_tags`;
    let res = await req('POST', base, maintainerToken, { name: 'v*' });
    assert.equal(res.statusCode, 201, res.body);
    const levelId = res.json().create_access_levels[0].id;
    assert.deepEqual(res.json(), {
      name: 'v*', create_access_levels: [{ id: levelId, access_level: 40, access_level_description: 'Maintainers' }],
    });
    res = await req('POST', base, maintainerToken, { name: 'v*', create_access_level: 30 });
    assert.deepEqual([res.statusCode, res.json()], [422, { message: ['Name has already been taken'] }]);
    res = await req('POST', base, maintainerToken, { name: 'rc-*', create_access_level: 60 });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'create_access_level does not have a valid value' }]);
    res = await req('POST', base, maintainerToken, { name: 'dev-*', create_access_level: 30 });
    assert.equal(res.statusCode, 201);
    res = await req('GET', base, maintainerToken);
    assert.deepEqual(res.json().map((x: { name: string }) => x.name), ['v*', 'dev-*']);
    res = await req('GET', `${base}/v*`, maintainerToken);
    assert.equal(res.json().name, 'v*');
    assert.equal((await req('GET', base, developerToken)).statusCode, 403);
    assert.equal((await req('DELETE', `${base}/dev-*`, maintainerToken)).statusCode, 204);
    assert.deepEqual((await req('GET', `${base}/dev-*`, maintainerToken)).json(), { message: '404 Not found' });
  });

  it('refuses API writes to protected branches and tags with the Service messages', async () => {
    const id = project.id;
    const file = (token: string, branch: string) => req('POST', `${api(id)}/repository/files/${encodeURIComponent(`f-${seq++}.txt`)}`, token, {
      branch, content: 'x', commit_message: 'write',
    });
    let res = await file(developerToken, 'main');
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
    res = await req('POST', `${api(id)}/repository/commits`, developerToken, {
      branch: 'main', commit_message: 'c', actions: [{ action: 'create', file_path: 'c.txt', content: 'c' }],
    });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
    assert.equal((await file(maintainerToken, 'main')).statusCode, 201);
    // An unprotected branch is the Developer's.
    res = await req('POST', `${api(id)}/repository/commits`, developerToken, {
      branch: 'topic', start_branch: 'main', commit_message: 'c', actions: [{ action: 'create', file_path: 'c.txt', content: 'c' }],
    });
    assert.equal(res.statusCode, 201, res.body);

    // Branches: creating one a pattern protects against Developers; deleting it.
    assert.equal((await req('POST', `${api(id)}/protected_branches`, maintainerToken, { name: 'stable-*' })).statusCode, 201);
    res = await req('POST', `${api(id)}/repository/branches`, developerToken, { branch: 'stable-1', ref: 'main' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to create protected branches on this project.' }]);
    res = await req('POST', `${api(id)}/repository/branches`, developerToken, { branch: 'release-1', ref: 'main' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().protected, res.json().developers_can_push, res.json().can_push], [true, true, true]);
    res = await req('POST', `${api(id)}/repository/branches`, maintainerToken, { branch: 'stable-1', ref: 'main' });
    assert.equal(res.statusCode, 201, res.body);
    res = await req('DELETE', `${api(id)}/repository/branches/stable-1`, developerToken);
    assert.deepEqual([res.statusCode, res.json()], [400, { message: DELETE_DENIED }]);
    assert.equal((await req('DELETE', `${api(id)}/repository/branches/stable-1`, maintainerToken)).statusCode, 204);

    // Tags: `v*` is the Maintainers'; a protected tag is never deleted.
    res = await req('POST', `${api(id)}/repository/tags`, developerToken, { tag_name: 'v1.0', ref: 'main' });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to create this tag as it is protected.' }]);
    res = await req('POST', `${api(id)}/repository/tags`, maintainerToken, { tag_name: 'v1.0', ref: 'main' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().protected, true);
    res = await req('DELETE', `${api(id)}/repository/tags/v1.0`, maintainerToken);
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Protected tags cannot be deleted.' }]);
    res = await req('POST', `${api(id)}/repository/tags`, developerToken, { tag_name: 'plain', ref: 'main' });
    assert.deepEqual([res.statusCode, res.json().protected], [201, false]);
    assert.equal((await req('DELETE', `${api(id)}/repository/tags/plain`, developerToken)).statusCode, 204);
  });

  it('refuses git pushes, force pushes and deletions the protection forbids, over real git', async () => {
    const dev = await clone(developer, developerToken, 'dev');
    await commit(dev, 'dev.txt');
    let r = await git(['push', 'origin', 'HEAD:main'], dev);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`remote: ${PUSH_DENIED.replace(/\./g, '\\.')}`));
    assert.match(r.stderr, /pre-receive hook declined/);
    // The same commit on a branch of its own goes through, and so does a wildcard's Developer level.
    r = await git(['push', 'origin', 'HEAD:refs/heads/dev-work', 'HEAD:refs/heads/release-2'], dev);
    assert.equal(r.code, 0, r.stderr);

    const maint = await clone(maintainer, maintainerToken, 'maint');
    await commit(maint, 'maint.txt');
    r = await git(['push', 'origin', 'HEAD:main'], maint);
    assert.equal(r.code, 0, r.stderr);
    // A rewritten history: refused until the branch allows force pushes.
    assert.equal((await git(['commit', '-q', '--amend', '-m', 'rewritten'], maint)).code, 0);
    r = await git(['push', '--force', 'origin', 'HEAD:main'], maint);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(FORCE_DENIED.replace(/\./g, '\\.')));
    assert.equal((await req('PATCH', `${api(project.id)}/protected_branches/main`, maintainerToken, { allow_force_push: true })).statusCode, 200);
    r = await git(['push', '--force', 'origin', 'HEAD:main'], maint);
    assert.equal(r.code, 0, r.stderr);
    // Force pushes are for those who may push: the Developer still may not.
    await git(['fetch', '-q', 'origin'], dev);
    assert.equal((await git(['reset', '-q', '--hard', 'origin/main'], dev)).code, 0);
    await commit(dev, 'again.txt');
    r = await git(['push', '--force', 'origin', 'HEAD:main'], dev);
    assert.match(r.stderr, new RegExp(PUSH_DENIED.replace(/\./g, '\\.')));

    // Deleting: a protected branch only from the web, and never by a Developer.
    r = await git(['push', 'origin', ':release-2'], dev);
    assert.match(r.stderr, new RegExp(DELETE_DENIED.replace(/\./g, '\\.')));
    r = await git(['push', 'origin', ':release-2'], maint);
    assert.match(r.stderr, /You can only delete protected branches using the web interface\./);
    r = await git(['push', 'origin', ':main'], maint);
    assert.match(r.stderr, /The default branch of a project cannot be deleted\./);
    r = await git(['push', 'origin', ':dev-work'], dev);
    assert.equal(r.code, 0, r.stderr);

    // Tags: a protected tag is created by its level only, and never moved or deleted.
    assert.equal((await git(['tag', 'v2.0'], dev)).code, 0);
    r = await git(['push', 'origin', 'refs/tags/v2.0'], dev);
    assert.match(r.stderr, /You are not allowed to create this tag as it is protected\./);
    assert.equal((await git(['tag', 'v2.0'], maint)).code, 0);
    r = await git(['push', 'origin', 'refs/tags/v2.0'], maint);
    assert.equal(r.code, 0, r.stderr);
    r = await git(['push', 'origin', ':refs/tags/v2.0'], maint);
    assert.match(r.stderr, /Protected tags cannot be deleted\./);
    const branches = (await req('GET', `${api(project.id)}/repository/branches?per_page=100`, maintainerToken)).json();
    assert.ok(branches.some((b: { name: string }) => b.name === 'release-2'));
    assert.ok(!branches.some((b: { name: string }) => b.name === 'dev-work'));
  });

  it('lets only Maintainers push the first branch of an empty repository, and protects it once pushed', async () => {
    const empty = await createProject({});
    const dev = await clone(developer, developerToken, 'empty-dev', empty);
    await git(['checkout', '-q', '-b', 'main'], dev);
    await commit(dev, 'first.txt');
    let r = await git(['push', 'origin', 'main'], dev);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`A default branch \\(e\\.g\\. main\\) does not yet exist for ${empty.path_with_namespace}`));
    assert.match(r.stderr, new RegExp(`${t.baseUrl}/${empty.path_with_namespace}/-/project_members`));
    const maint = await clone(maintainer, maintainerToken, 'empty-maint', empty);
    await git(['checkout', '-q', '-b', 'main'], maint);
    await commit(maint, 'first.txt');
    r = await git(['push', 'origin', 'main'], maint);
    assert.equal(r.code, 0, r.stderr);
    const listed = (await req('GET', `${api(empty.id)}/protected_branches`, maintainerToken)).json();
    assert.deepEqual(listed.map((b: { name: string }) => b.name), ['main']);

    // default_branch_protection 1: Developers may push the first branch and the default branch.
    await setSetting(t.db, 'default_branch_protection', 1);
    try {
      const open = await createProject({});
      const dir = await clone(developer, developerToken, 'open-dev', open);
      await git(['checkout', '-q', '-b', 'main'], dir);
      await commit(dir, 'first.txt');
      r = await git(['push', 'origin', 'main'], dir);
      assert.equal(r.code, 0, r.stderr);
      const [main] = (await req('GET', `${api(open.id)}/protected_branches`, maintainerToken)).json();
      assert.deepEqual([main.name, main.push_access_levels[0].access_level, main.merge_access_levels[0].access_level], ['main', 30, 40]);
      // 0: nothing is protected, not even a README's default branch.
      await setSetting(t.db, 'default_branch_protection', 0);
      const bare = await createProject({ initialize_with_readme: true });
      assert.deepEqual((await req('GET', `${api(bare.id)}/protected_branches`, maintainerToken)).json(), []);
      assert.equal((await req('POST', `${api(bare.id)}/repository/files/d.txt`, developerToken, {
        branch: 'main', content: 'd', commit_message: 'by a developer',
      })).statusCode, 201);
    } finally {
      await setSetting(t.db, 'default_branch_protection', 2);
    }
  });

  it('gives protected variables and protected runners only jobs of protected refs', async () => {
    const p = await createProject({});
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const ci: CiProject = {
      project: row, owner, ownerToken, fullPath: p.path_with_namespace,
      gitDir: repositoryPath(t.config.storages, row.repository_storage, row.disk_path),
    };
    // A job only protected refs run (CI_COMMIT_REF_PROTECTED), manual so runners leave it be.
    const config = 'job:\n  script: [echo]\nrelease:\n  script: [echo]\n  when: manual\n'
      + '  rules:\n    - if: $CI_COMMIT_REF_PROTECTED == "true"\n';
    await pushFiles(t, ci, { '.gitlab-ci.yml': config });
    await pushFiles(t, ci, { '.gitlab-ci.yml': config, 'x.txt': 'x' }, { branch: 'feature' });
    await pushFiles(t, ci, { '.gitlab-ci.yml': config, 'y.txt': 'y' }, { branch: 'deploy/eu' });
    let res = await req('POST', `${api(p.id)}/variables`, ownerToken, { key: 'SECRET', value: 'protected-value', protected: true });
    assert.equal(res.statusCode, 201, res.body);
    res = await req('POST', `${api(p.id)}/protected_branches`, ownerToken, { name: 'deploy/*' });
    assert.equal(res.statusCode, 201, res.body);

    // A protected runner, registered for this project only.
    res = await t.request({ method: 'GET', url: api(p.id), token: ownerToken });
    const runnersToken = res.json().runners_token as string;
    const register = async (accessLevel: string) => {
      const r = await t.request({ method: 'POST', url: '/api/v4/runners', payload: { token: runnersToken, access_level: accessLevel } });
      assert.equal(r.statusCode, 201, r.body);
      return new TestRunner(t, r.json().id, r.json().token);
    };
    const guarded = await register('ref_protected');

    const pipeline = async (ref: string) => {
      const r = await req('POST', `${api(p.id)}/pipeline?ref=${encodeURIComponent(ref)}`, ownerToken);
      assert.equal(r.statusCode, 201, r.body);
      return r.json() as { id: number };
    };
    const jobNames = async (id: number) => (await req('GET', `${api(p.id)}/pipelines/${id}/jobs`, ownerToken)).json()
      .map((j: { name: string }) => j.name).sort();
    assert.deepEqual(await jobNames((await pipeline('feature')).id), ['job']);
    // The protected runner leaves the unprotected ref's job alone.
    assert.equal(await guarded.request(), null);
    const shared = await register('not_protected');
    let job = await shared.requestJob();
    assert.equal(job.git_info.ref, 'feature');
    assert.equal(job.variables.find((v) => v.key === 'SECRET'), undefined);

    for (const ref of ['main', 'deploy/eu']) {
      assert.deepEqual(await jobNames((await pipeline(ref)).id), ['job', 'release']);
      job = await guarded.requestJob();
      assert.equal(job.git_info.ref, ref);
      assert.equal(job.variables.find((v) => v.key === 'SECRET')?.value, 'protected-value');
    }
  });
});
