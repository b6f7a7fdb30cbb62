/**
 * Repository content through the API at the HTTP boundary (issue 20, item 6): branches, tags,
 * commits (read, and made of file actions), files (read, raw, blame, write) and the tree. Every
 * write is checked in the bare repository with git itself: a real commit, a consistent object
 * store, refs moved as answered.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { projectRepository, updateRefs } from '../../src/domain/repositories/project-repository.ts';

describe('repository content through the API', () => {
  let t: TestApp;
  let dev: UserRow;
  let devToken: string;
  let reporterToken: string;
  let outsiderToken: string;
  let project: { id: number; path_with_namespace: string };
  let gitDir: string;
  const base = () => `/api/v4/projects/${project.id}/repository`;
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: '/tmp' } }).trim();

  before(async () => {
    t = await startTestApp();
    dev = await createUser(t.db, { username: 'dev1', name: 'Dev One', email: 'dev1@example.com' });
    devToken = await createToken(t.db, dev);
    const reporter = await createUser(t.db, { username: 'rep1' });
    reporterToken = await createToken(t.db, reporter);
    outsiderToken = await createToken(t.db, await createUser(t.db, { username: 'out1' }));
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'content', initialize_with_readme: true } });
    assert.equal(res.statusCode, 201, res.body);
    project = res.json();
    const m = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: devToken, payload: { user_id: reporter.id, access_level: 20 } });
    assert.equal(m.statusCode, 201, m.body);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
    gitDir = path.join(t.dataDir, 'repositories', row.disk_path);
  });
  after(async () => { await t.close(); });

  it('commits several actions as one real git commit, with start_branch, base64 and chmod', async () => {
    const res = await t.request({
      method: 'POST', url: `${base()}/commits`, token: devToken,
      payload: {
        branch: 'feature/one', start_branch: 'main', commit_message: 'Add files\n\nwith a body', author_name: 'Someone Else', author_email: 'else@example.com',
        actions: [
          { action: 'create', file_path: 'src/app.txt', content: 'hello\n' },
          { action: 'create', file_path: '/bin//run.sh', content: Buffer.from('#!/bin/sh\necho hi\n').toString('base64'), encoding: 'base64', execute_filemode: true },
          { action: 'update', file_path: 'README.md', content: '# Content\nmore\n' },
          { action: 'create', file_path: 'doomed.txt', content: 'x' },
          { action: 'move', file_path: 'docs/moved.txt', previous_path: 'doomed.txt' },
          { action: 'chmod', file_path: 'src/app.txt', execute_filemode: true },
        ],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const c = res.json();
    assert.equal(c.title, 'Add files');
    assert.equal(c.message, 'Add files\n\nwith a body');
    assert.equal(c.author_name, 'Someone Else');
    assert.equal(c.author_email, 'else@example.com');
    assert.equal(c.committer_name, 'Dev One');
    assert.equal(c.committer_email, 'dev1@example.com');
    assert.equal(c.project_id, project.id);
    assert.ok(c.stats.additions >= 4);
    assert.equal(c.parent_ids.length, 1);
    assert.equal(git('rev-parse', 'refs/heads/feature/one'), c.id);
    assert.equal(git('rev-parse', 'refs/heads/main'), c.parent_ids[0]);
    assert.deepEqual(git('ls-tree', '-r', '--name-only', c.id).split('\n'), ['README.md', 'bin/run.sh', 'docs/moved.txt', 'src/app.txt']);
    assert.match(git('ls-tree', c.id, 'bin/run.sh'), /^100755 /);
    assert.match(git('ls-tree', c.id, 'src/app.txt'), /^100755 /);
    assert.equal(git('show', `${c.id}:bin/run.sh`), '#!/bin/sh\necho hi');
    git('fsck', '--strict', '--no-dangling');
  });

  it('refuses invalid actions with the Service messages; nothing moves', async () => {
    const before = git('rev-parse', 'refs/heads/main');
    const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: `${base()}/commits`, token: devToken, payload: { branch: 'main', commit_message: 'x', ...payload } });
    const cases: [Record<string, unknown>, string][] = [
      [{ actions: [{ action: 'create', file_path: 'README.md', content: 'x' }] }, 'A file with this name already exists'],
      [{ actions: [{ action: 'update', file_path: 'nope.txt', content: 'x' }] }, "A file with this name doesn't exist"],
      [{ actions: [{ action: 'delete', file_path: 'nope.txt' }] }, "A file with this name doesn't exist"],
      [{ actions: [{ action: 'create', file_path: '../escape', content: 'x' }] }, 'Path cannot include directory traversal'],
      [{ actions: [{ action: 'create', file_path: 'a/./b', content: 'x' }] }, 'Path cannot include directory traversal'],
      [{ actions: [{ action: 'create', file_path: '.git/config', content: 'x' }] }, 'Path cannot include a .git directory'],
      [{ actions: [{ action: 'create', file_path: 'README.md/x', content: 'x' }] }, 'A file with this name already exists'],
      [{ branch: 'feature/one', actions: [{ action: 'create', file_path: 'src', content: 'x' }] }, 'A directory with this name already exists'],
      [{ branch: 'feature/one', actions: [{ action: 'update', file_path: 'src', content: 'x' }] }, "A file with this name doesn't exist"],
      [{ actions: [{ action: 'update', file_path: 'README.md', content: 'x', last_commit_id: '0'.repeat(40) }] }, 'The file has changed since you started editing it: README.md'],
      [{ actions: [{ action: 'move', file_path: 'x.md' }] }, 'You must supply the original file path when moving file `x.md`.'],
      [{ branch: 'new-branch', start_branch: 'missing', actions: [{ action: 'create', file_path: 'f', content: 'x' }] }, 'You can only create or edit files when you are on a branch'],
      [{ branch: 'feature/one', start_branch: 'main', actions: [{ action: 'create', file_path: 'f', content: 'x' }] }, "A branch called 'feature/one' already exists. Switch to that branch in order to make changes"],
      [{ branch: 'bad..name', actions: [{ action: 'create', file_path: 'f', content: 'x' }] }, "Something went wrong when we tried to create 'bad..name' for you: Branch name is invalid"],
      [{ start_sha: 'abc', actions: [{ action: 'create', file_path: 'f', content: 'x' }] }, "Invalid start_sha 'abc'"],
    ];
    for (const [payload, message] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.deepEqual(res.json(), { message }, JSON.stringify(payload));
    }
    for (const bad of [{ actions: [{ action: 'explode', file_path: 'f' }] }, { actions: [] }, { actions: [{ action: 'create', file_path: 'f', content: '!!!', encoding: 'base64' }] }]) {
      assert.equal((await post(bad)).statusCode, 400, JSON.stringify(bad));
    }
    assert.equal((await post({ actions: [{ action: 'create', file_path: 'a\u0000b', content: 'x' }] })).statusCode, 400);
    assert.equal((await post({ actions: [{ action: 'create', file_path: 'x'.repeat(5000), content: 'x' }] })).statusCode, 400);
    assert.equal((await post({ commit_message: 'm'.repeat(1024 * 1024 + 1), actions: [{ action: 'create', file_path: 'f', content: 'x' }] })).statusCode, 400);
    assert.deepEqual((await post({ author_name: 'n'.repeat(1024 * 1024), actions: [{ action: 'create', file_path: 'f', content: 'x' }] })).json(), { error: 'author_name is too long' });
    assert.deepEqual((await post({ commit_message: 'a\u0000b', actions: [{ action: 'create', file_path: 'f', content: 'x' }] })).json(), { error: 'commit_message is invalid' });
    assert.equal(git('rev-parse', 'refs/heads/main'), before);
    // Reporters may read but not push; outsiders do not see a private project.
    const denied = await t.request({ method: 'POST', url: `${base()}/commits`, token: reporterToken, payload: { branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'f', content: 'x' }] } });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { message: '403 Forbidden - You are not allowed to push into this branch' });
    assert.equal((await t.request({ method: 'GET', url: `${base()}/commits`, token: outsiderToken })).statusCode, 404);
  });

  it('a directory emptied by earlier actions of the same commit may become a file', async () => {
    const res = await t.request({
      method: 'POST', url: `${base()}/commits`, token: devToken,
      payload: { branch: 'dir-swap', start_branch: 'feature/one', commit_message: 'Swap', actions: [
        { action: 'delete', file_path: 'src/app.txt' },
        { action: 'create', file_path: 'src', content: 'now a file' },
      ] },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(git('show', `${res.json().id}:src`), 'now a file');
    assert.equal(git('cat-file', '-t', `${res.json().id}:src`), 'blob');
    assert.equal((await t.request({ method: 'DELETE', url: `${base()}/branches/dir-swap`, token: devToken })).statusCode, 204);
  });

  it('optimistic last_commit_id: the right id commits; writes refused while read-only', async () => {
    const last = (await t.request({ method: 'GET', url: `${base()}/files/README.md?ref=main`, token: devToken })).json().last_commit_id;
    const ok = await t.request({ method: 'POST', url: `${base()}/commits`, token: devToken, payload: { branch: 'main', commit_message: 'Edit', actions: [{ action: 'update', file_path: 'README.md', content: 'v2\n', last_commit_id: last }] } });
    assert.equal(ok.statusCode, 201, ok.body);
    await t.db.updateTable('projects').set({ read_only: 1 }).where('id', '=', project.id).execute();
    const refused = await t.request({ method: 'POST', url: `${base()}/commits`, token: devToken, payload: { branch: 'main', commit_message: 'Edit', actions: [{ action: 'update', file_path: 'README.md', content: 'v3\n' }] } });
    assert.equal(refused.statusCode, 409);
    assert.deepEqual(refused.json(), { message: 'The repository is temporarily read-only. Please try again later.' });
    assert.equal((await t.request({ method: 'POST', url: `${base()}/branches`, token: devToken, payload: { branch: 'ro', ref: 'main' } })).statusCode, 409);
    assert.equal((await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'ro', ref: 'main' } })).statusCode, 409);
    assert.equal((await t.request({ method: 'DELETE', url: `${base()}/files/README.md?branch=main&commit_message=x`, token: devToken })).statusCode, 409);
    // The ref update itself checks under the row lock, whatever the route saw before.
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
    const repo = projectRepository(t.config.storages, row);
    const head = git('rev-parse', 'refs/heads/main');
    assert.deepEqual(await updateRefs(t.db, repo, [{ ref: 'refs/heads/locked', before: '0'.repeat(40), after: head }]), { ok: false, reason: 'read_only' });
    await t.db.updateTable('projects').set({ read_only: 0 }).where('id', '=', project.id).execute();
    // A row that names another storage than the one the objects went to (a move finished meanwhile).
    assert.deepEqual(await updateRefs(t.db, { ...repo, storage: 'elsewhere' }, [{ ref: 'refs/heads/locked', before: '0'.repeat(40), after: head }]), { ok: false, reason: 'read_only' });
    assert.deepEqual(await updateRefs(t.db, repo, [{ ref: 'refs/heads/main', before: '0'.repeat(40), after: head }]), { ok: false, reason: 'stale' });
    assert.equal(git('for-each-ref', 'refs/heads/locked'), '');
    assert.equal(git('rev-parse', 'refs/heads/main'), ok.json().id);
  });

  it('branches: list, show, create, delete with the Service messages', async () => {
    const created = await t.request({ method: 'POST', url: `${base()}/branches`, token: devToken, payload: { branch: 'release/1.0', ref: 'main' } });
    assert.equal(created.statusCode, 201, created.body);
    const b = created.json();
    assert.equal(b.name, 'release/1.0');
    assert.equal(b.commit.id, git('rev-parse', 'refs/heads/main'));
    assert.equal(b.merged, true);
    assert.equal(b.default, false);
    assert.equal(b.can_push, true);
    assert.equal(b.protected, false);
    assert.equal(b.web_url, `http://kiln.test/${project.path_with_namespace}/-/tree/release/1.0`);
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/branches`, token: devToken, payload: { branch: 'release/1.0', ref: 'main' } })).json(), { message: 'Branch already exists' });
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/branches`, token: devToken, payload: { branch: 'x', ref: 'nowhere' } })).json(), { message: 'Invalid reference name: nowhere' });
    for (const bad of ['a..b', 'HEAD', '-x', 'a b', 'a.lock', 'x/', 'a@{1}', 'a\u0000b', 'refs/heads/x', 'y'.repeat(2000)]) {
      const res = await t.request({ method: 'POST', url: `${base()}/branches`, token: devToken, payload: { branch: bad, ref: 'main' } });
      assert.equal(res.statusCode, 400, bad);
      assert.deepEqual(res.json(), { message: 'Branch name is invalid' }, bad);
    }
    const list = await t.request({ method: 'GET', url: `${base()}/branches?per_page=2`, token: reporterToken });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((x: { name: string }) => x.name), ['feature/one', 'main']);
    assert.equal(list.headers['x-total'], '3');
    const main = list.json()[1];
    assert.equal(main.default, true);
    assert.equal(main.merged, false);
    assert.equal(main.can_push, false);
    assert.equal(list.json()[0].merged, false, 'feature/one has a commit main lacks');
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/branches?search=^rel`, token: devToken })).json().map((x: { name: string }) => x.name), ['release/1.0']);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/branches?search=ONE$`, token: devToken })).json().map((x: { name: string }) => x.name), ['feature/one']);
    const one = await t.request({ method: 'GET', url: `${base()}/branches/release%2F1.0`, token: devToken });
    assert.equal(one.statusCode, 200);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/branches/nope`, token: devToken })).json(), { message: '404 Branch Not Found' });

    const forbidden = await t.request({ method: 'DELETE', url: `${base()}/branches/release%2F1.0`, token: reporterToken });
    assert.equal(forbidden.statusCode, 403);
    const defaultDelete = await t.request({ method: 'DELETE', url: `${base()}/branches/main`, token: devToken });
    assert.equal(defaultDelete.statusCode, 405);
    assert.deepEqual(defaultDelete.json(), { message: 'The default branch of a project cannot be deleted.' });
    const del = await t.request({ method: 'DELETE', url: `${base()}/branches/release%2F1.0`, token: devToken });
    assert.equal(del.statusCode, 204);
    assert.equal(git('for-each-ref', 'refs/heads/release/'), '');
    assert.equal((await t.request({ method: 'DELETE', url: `${base()}/branches/release%2F1.0`, token: devToken })).statusCode, 404);
  });

  it('tags: lightweight and annotated, list orders, delete', async () => {
    const light = await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'v1.2', ref: 'main' } });
    assert.equal(light.statusCode, 201, light.body);
    assert.equal(light.json().target, git('rev-parse', 'refs/heads/main'));
    assert.equal(light.json().message, null);
    const annotated = await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'v1.10', ref: 'feature/one', message: 'Release 1.10' } });
    assert.equal(annotated.statusCode, 201, annotated.body);
    const a = annotated.json();
    assert.equal(a.message, 'Release 1.10');
    assert.equal(a.target, git('rev-parse', 'refs/tags/v1.10'));
    assert.equal(a.commit.id, git('rev-parse', 'refs/heads/feature/one'));
    assert.equal(git('cat-file', '-t', a.target), 'tag');
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'v1.2', ref: 'main' } })).json(), { message: 'Tag v1.2 already exists' });
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'bad tag', ref: 'main' } })).json(), { message: 'Tag name invalid' });
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'v9', ref: 'zzz' } })).json(), { message: 'Target zzz is invalid' });
    assert.equal((await t.request({ method: 'POST', url: `${base()}/tags`, token: reporterToken, payload: { tag_name: 'v9', ref: 'main' } })).statusCode, 403);
    assert.equal((await t.request({ method: 'POST', url: `${base()}/tags`, token: devToken, payload: { tag_name: 'v9', ref: 'main', message: 'a\u0000b' } })).statusCode, 400);
    const names = async (q: string) => (await t.request({ method: 'GET', url: `${base()}/tags${q}`, token: reporterToken })).json().map((x: { name: string }) => x.name);
    assert.deepEqual(await names('?order_by=name&sort=asc'), ['v1.10', 'v1.2']);
    assert.deepEqual(await names('?order_by=version&sort=asc'), ['v1.2', 'v1.10']);
    assert.deepEqual(await names('?search=10'), ['v1.10']);
    assert.equal((await t.request({ method: 'GET', url: `${base()}/tags/v1.10`, token: devToken })).json().name, 'v1.10');
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/tags/v0`, token: devToken })).json(), { message: '404 Tag Not Found' });
    assert.equal((await t.request({ method: 'DELETE', url: `${base()}/tags/v1.2`, token: devToken })).statusCode, 204);
    assert.equal(git('for-each-ref', 'refs/tags/v1.2'), '');
  });

  it('commits: list with filters and pagination, one commit with stats', async () => {
    const list = await t.request({ method: 'GET', url: `${base()}/commits?ref_name=feature/one&per_page=1`, token: reporterToken });
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(list.json().length, 1);
    assert.equal(list.json()[0].title, 'Add files');
    assert.equal(list.headers['x-total'], '2');
    assert.equal(list.headers['x-next-page'], '2');
    const page2 = await t.request({ method: 'GET', url: `${base()}/commits?ref_name=feature/one&per_page=1&page=2`, token: reporterToken });
    assert.equal(page2.json()[0].parent_ids.length, 0);
    const onPath = await t.request({ method: 'GET', url: `${base()}/commits?ref_name=feature/one&path=bin/run.sh&with_stats=true`, token: devToken });
    assert.equal(onPath.json().length, 1);
    assert.ok(onPath.json()[0].stats.additions > 0);
    assert.equal((await t.request({ method: 'GET', url: `${base()}/commits?all=true`, token: devToken })).json().length, 3);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/commits?ref_name=missing`, token: devToken })).json(), []);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/commits?ref_name=--all`, token: devToken })).json(), []);
    const sha = list.json()[0].id;
    const one = await t.request({ method: 'GET', url: `${base()}/commits/${sha}`, token: devToken });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().id, sha);
    assert.equal(one.json().last_pipeline, null);
    assert.equal(one.json().status, null);
    assert.ok(one.json().stats.total > 0);
    assert.equal((await t.request({ method: 'GET', url: `${base()}/commits/feature%2Fone`, token: devToken })).json().id, sha);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/commits/${'f'.repeat(40)}`, token: devToken })).json(), { message: '404 Commit Not Found' });
  });

  it('files: read, raw, HEAD, blame; create, update, delete as commits', async () => {
    const read = await t.request({ method: 'GET', url: `${base()}/files/bin%2Frun.sh?ref=feature/one`, token: reporterToken });
    assert.equal(read.statusCode, 200, read.body);
    const f = read.json();
    assert.equal(Buffer.from(f.content, 'base64').toString(), '#!/bin/sh\necho hi\n');
    assert.equal(f.file_name, 'run.sh');
    assert.equal(f.file_path, 'bin/run.sh');
    assert.equal(f.execute_filemode, true);
    assert.equal(f.encoding, 'base64');
    assert.equal(f.blob_id, git('rev-parse', 'feature/one:bin/run.sh'));
    assert.equal(read.headers['x-gitlab-blob-id'], f.blob_id);
    const head = await t.request({ method: 'HEAD', url: `${base()}/files/bin%2Frun.sh?ref=feature/one`, token: reporterToken });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['x-gitlab-size'], '18');
    assert.equal(head.body, '');
    const raw = await t.request({ method: 'GET', url: `${base()}/files/bin%2Frun.sh/raw?ref=feature/one`, token: reporterToken });
    assert.equal(raw.body, '#!/bin/sh\necho hi\n');
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    // Binary and larger content streams through /raw byte for byte.
    const bytes = Buffer.concat([Buffer.from([0, 1, 2, 255]), crypto.randomBytes(300_000)]);
    const put = await t.request({ method: 'POST', url: `${base()}/files/data.bin`, token: devToken, payload: { branch: 'feature/one', content: bytes.toString('base64'), encoding: 'base64', commit_message: 'Binary' } });
    assert.equal(put.statusCode, 201, put.body);
    const rawBin = await t.request({ method: 'GET', url: `${base()}/files/data.bin/raw?ref=feature/one`, token: devToken });
    assert.equal(rawBin.headers['content-type'], 'application/octet-stream');
    assert.equal(rawBin.headers['content-length'], String(bytes.length));
    assert.ok(rawBin.rawPayload.equals(bytes));
    assert.equal(rawBin.headers['x-gitlab-blob-id'], git('rev-parse', 'feature/one:data.bin'));
    await t.request({ method: 'DELETE', url: `${base()}/files/data.bin`, token: devToken, payload: { branch: 'feature/one', commit_message: 'No binary' } });
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/files/nope?ref=main`, token: devToken })).json(), { message: '404 File Not Found' });
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/files/bin?ref=feature/one`, token: devToken })).json(), { message: '404 File Not Found' });
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/files/README.md?ref=nowhere`, token: devToken })).json(), { message: '404 Commit Not Found' });
    assert.equal((await t.request({ method: 'GET', url: `${base()}/files/README.md`, token: devToken })).statusCode, 400);
    const blame = await t.request({ method: 'GET', url: `${base()}/files/bin%2Frun.sh/blame?ref=feature/one`, token: devToken });
    assert.equal(blame.statusCode, 200, blame.body);
    assert.deepEqual(blame.json().map((r: { lines: string[] }) => r.lines), [['#!/bin/sh', 'echo hi']]);

    const created = await t.request({ method: 'POST', url: `${base()}/files/docs%2Fnew.md`, token: devToken, payload: { branch: 'main', content: 'new', commit_message: 'Add new.md' } });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json(), { file_path: 'docs/new.md', branch: 'main' });
    assert.equal(git('show', 'main:docs/new.md'), 'new');
    assert.deepEqual((await t.request({ method: 'POST', url: `${base()}/files/docs%2Fnew.md`, token: devToken, payload: { branch: 'main', content: 'x', commit_message: 'again' } })).json(), { message: 'A file with this name already exists' });
    const updated = await t.request({ method: 'PUT', url: `${base()}/files/docs%2Fnew.md`, token: devToken, payload: { branch: 'main', content: Buffer.from('newer').toString('base64'), encoding: 'base64', commit_message: 'Update new.md' } });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(git('show', 'main:docs/new.md'), 'newer');
    assert.equal(git('log', '-1', '--format=%s', 'main'), 'Update new.md');
    const deleted = await t.request({ method: 'DELETE', url: `${base()}/files/docs%2Fnew.md`, token: devToken, payload: { branch: 'main', commit_message: 'Remove new.md' } });
    assert.equal(deleted.statusCode, 204);
    assert.equal(git('ls-tree', 'main', 'docs/new.md'), '');
    assert.equal((await t.request({ method: 'PUT', url: `${base()}/files/docs%2Fnew.md`, token: reporterToken, payload: { branch: 'main', content: 'x', commit_message: 'x' } })).statusCode, 403);
    assert.equal((await t.request({ method: 'POST', url: `${base()}/files/..%2Fx`, token: devToken, payload: { branch: 'main', content: 'x', commit_message: 'x' } })).statusCode, 400);
    git('fsck', '--strict', '--no-dangling');
  });

  it('tree: a directory, recursive, pagination, 404 for what is not there', async () => {
    const root = await t.request({ method: 'GET', url: `${base()}/tree?ref=feature/one`, token: reporterToken });
    assert.equal(root.statusCode, 200, root.body);
    assert.deepEqual(root.json().map((e: { path: string; type: string }) => `${e.type}:${e.path}`), ['tree:bin', 'tree:docs', 'tree:src', 'blob:README.md']);
    const recursive = await t.request({ method: 'GET', url: `${base()}/tree?ref=feature/one&recursive=true&per_page=3`, token: reporterToken });
    assert.equal(recursive.headers['x-total'], '7');
    assert.equal(recursive.json().length, 3);
    const first = await t.request({ method: 'GET', url: `${base()}/tree?ref=feature/one&recursive=true&pagination=keyset&per_page=4`, token: reporterToken });
    assert.equal(first.json().length, 4);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link as string)![1];
    assert.ok(next.includes(`page_token=${first.json()[3].id}`), next);
    const second = await t.request({ method: 'GET', url: next.replace('http://kiln.test', ''), token: reporterToken });
    assert.deepEqual([...first.json(), ...second.json()].map((e: { path: string }) => e.path), ['bin', 'docs', 'src', 'README.md', 'bin/run.sh', 'docs/moved.txt', 'src/app.txt']);
    assert.ok(!/[?&]page=/.test(next), next);
    assert.equal(second.headers.link, undefined);
    assert.equal((await t.request({ method: 'GET', url: `${base()}/tree?pagination=keyset&page_token=${'0'.repeat(40)}`, token: reporterToken })).statusCode, 400);
    const sub = await t.request({ method: 'GET', url: `${base()}/tree?ref=feature/one&path=src/`, token: reporterToken });
    assert.deepEqual(sub.json(), [{ id: git('rev-parse', 'feature/one:src/app.txt'), name: 'app.txt', type: 'blob', path: 'src/app.txt', mode: '100755' }]);
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/tree?path=nope`, token: devToken })).json(), { message: '404 Tree Not Found' });
    assert.deepEqual((await t.request({ method: 'GET', url: `${base()}/tree?ref=zzz`, token: devToken })).json(), { message: '404 Tree Not Found' });
    assert.equal((await t.request({ method: 'GET', url: `${base()}/tree?path=README.md`, token: devToken })).statusCode, 404);
  });

  it('concurrent commits to one branch: each lands on the other or is refused, none is lost', async () => {
    const start = git('rev-parse', 'refs/heads/main');
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => t.request({
      method: 'POST', url: `${base()}/commits`, token: devToken,
      payload: { branch: 'main', commit_message: `Concurrent ${i}`, actions: [{ action: 'create', file_path: `concurrent/${i}.txt`, content: String(i) }] },
    })));
    const landed = results.filter((r) => r.statusCode === 201).map((r) => r.json().id as string);
    const refused = results.filter((r) => r.statusCode !== 201);
    assert.ok(landed.length >= 1);
    for (const r of refused) assert.deepEqual([r.statusCode, r.json()], [400, { message: 'Could not update refs/heads/main. Please refresh and try again.' }]);
    // Every commit that was answered 201 is in main's history, on top of the start.
    const history = git('rev-list', `${start}..main`).split('\n');
    assert.deepEqual(new Set(history), new Set(landed));
    assert.equal(git('ls-tree', '--name-only', 'main', 'concurrent/').split('\n').length, landed.length);
  });

  it('an empty repository takes a first commit through the API', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'empty-one' } });
    const id = res.json().id;
    assert.deepEqual((await t.request({ method: 'GET', url: `/api/v4/projects/${id}/repository/branches`, token: devToken })).json(), []);
    const first = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/repository/commits`, token: devToken, payload: { branch: 'trunk', commit_message: 'First', actions: [{ action: 'create', file_path: 'README.md', content: 'hi' }] } });
    assert.equal(first.statusCode, 201, first.body);
    assert.deepEqual(first.json().parent_ids, []);
    const p = (await t.request({ method: 'GET', url: `/api/v4/projects/${id}`, token: devToken })).json();
    assert.equal(p.default_branch, 'trunk');
    assert.equal(p.empty_repo, false);
    assert.equal(p.readme_url, `http://kiln.test/dev1/empty-one/-/blob/trunk/README.md`);
  });

  it('a public repository reads without authentication; writes need it', async () => {
    const pub = (await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'open', visibility: 'public', initialize_with_readme: true } })).json();
    const at = `/api/v4/projects/${pub.id}/repository`;
    const branches = await t.request({ method: 'GET', url: `${at}/branches` });
    assert.equal(branches.statusCode, 200);
    assert.deepEqual(branches.json().map((b: { name: string; can_push: boolean }) => [b.name, b.can_push]), [['main', false]]);
    assert.equal((await t.request({ method: 'GET', url: `${at}/files/README.md/raw` })).statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: `${at}/tree` })).statusCode, 200);
    assert.equal((await t.request({ method: 'POST', url: `${at}/branches`, payload: { branch: 'x', ref: 'main' } })).statusCode, 401);
    const outsider = await t.request({ method: 'POST', url: `${at}/branches`, token: outsiderToken, payload: { branch: 'x', ref: 'main' } });
    assert.deepEqual([outsider.statusCode, outsider.json()], [403, { message: '403 Forbidden' }]);
  });
});
