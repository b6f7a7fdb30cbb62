/**
 * Personal snippets as the Service 15.2 API takes them (issue 35, item 11) and the public list
 * (GET /snippets/public, which `/snippets/:id` used to swallow as `400 id is invalid`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { runGit } from '../../src/domain/repositories/git-command.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('snippets: public list and files', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    bobToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t?.close(); });

  const create = (token: string, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v4/snippets', token, payload });
  const update = (token: string, id: number, payload: Record<string, unknown>) =>
    t.request({ method: 'PUT', url: `/api/v4/snippets/${id}`, token, payload });
  const repoOf = (id: number) => path.join(t.dataDir, 'repositories', '@snippets', `${id}.git`);
  const tree = async (id: number) =>
    (await runGit(['ls-tree', '-r', '--name-only', 'main'], { gitDir: repoOf(id) })).stdout.split('\n').filter(Boolean);
  const show = async (id: number, file: string) => (await runGit(['show', `main:${file}`], { gitDir: repoOf(id) })).stdout;
  const commits = async (id: number) => Number((await runGit(['rev-list', '--count', 'main'], { gitDir: repoOf(id) })).stdout.trim());
  const snippetCount = async () =>
    Number((await t.db.selectFrom('snippets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const paths = (body: { files: { path: string }[] }) => body.files.map((f) => f.path);

  it('lists every public personal snippet, newest first, to any signed-in user', async () => {
    const pub1 = (await create(aliceToken, { title: 'p1', file_name: 'a.txt', content: 'a', visibility: 'public' })).json();
    await create(aliceToken, { title: 'internal', file_name: 'b.txt', content: 'b', visibility: 'internal' });
    await create(aliceToken, { title: 'private', file_name: 'c.txt', content: 'c', visibility: 'private' });
    const pub2 = (await create(bobToken, { title: 'p2', file_name: 'd.txt', content: 'd', visibility: 'public' })).json();
    const res = await t.request({ url: '/api/v4/snippets/public', token: bobToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((s: { id: number }) => s.id), [pub2.id, pub1.id]);
    assert.equal(res.headers['x-total'], '2');
    assert.equal(res.json()[1].author.id, alice.id);
    assert.equal(res.json()[0].repository_storage, undefined);
    const admin = await t.request({ url: '/api/v4/snippets/public?per_page=1', token: ROOT_TOKEN });
    const storages = admin.json().map((s: { id: number; repository_storage: string }) => [s.id, s.repository_storage]);
    assert.deepEqual(storages, [[pub2.id, 'default']]);
    assert.equal(admin.headers['x-next-page'], '2');
    assert.equal((await t.request({ url: '/api/v4/snippets/public' })).statusCode, 401);
  });

  it('creates a snippet of several files, one commit in its repository', async () => {
    const res = await create(aliceToken, {
      title: 'Several', visibility: 'public',
      files: [
        { file_path: 'b.rb', content: 'puts 1\n' }, { file_path: 'a.md', content: '# A\n' }, { file_path: 'dir/c b.txt', content: 'c\n' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const s = res.json();
    // Repository order; the first file names the snippet (file_name_on_repo).
    assert.deepEqual(s.files, [
      { path: 'a.md', raw_url: `http://kiln.test/-/snippets/${s.id}/raw/main/a.md` },
      { path: 'b.rb', raw_url: `http://kiln.test/-/snippets/${s.id}/raw/main/b.rb` },
      { path: 'dir/c b.txt', raw_url: `http://kiln.test/-/snippets/${s.id}/raw/main/dir/c%20b.txt` },
    ]);
    assert.equal(s.file_name, 'a.md');
    assert.deepEqual(await tree(s.id), ['a.md', 'b.rb', 'dir/c b.txt']);
    assert.equal(await show(s.id, 'b.rb'), 'puts 1\n');
    const log = await runGit(['log', '--format=%an <%ae> %s', 'main'], { gitDir: repoOf(s.id) });
    assert.equal(log.stdout, `${alice.name} <${alice.email}> Initial commit\n`);
    const row = await t.db.selectFrom('snippets').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.file_name, row.content, JSON.parse(row.file_paths!)], ['a.md', '# A\n', ['a.md', 'b.rb', 'dir/c b.txt']]);
    // The snippet's raw answer is its first file.
    assert.equal((await t.request({ url: `/api/v4/snippets/${s.id}/raw` })).body, '# A\n');
    // The form encoding of the same array.
    const form = await t.request({
      method: 'POST', url: '/api/v4/snippets', token: aliceToken, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'title=Form&files[0][file_path]=x.txt&files[0][content]=x&files[1][file_path]=y.txt&files[1][content]=y',
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.deepEqual(paths(form.json()), ['x.txt', 'y.txt']);
  });

  it('serves each file raw at a ref', async () => {
    const files = [{ file_path: 'dir/one.txt', content: 'one\n' }, { file_path: 'two.md', content: '# two\n' }];
    const s = (await create(aliceToken, { title: 'Raw', files })).json();
    const url = (ref: string, file: string) => `/api/v4/snippets/${s.id}/files/${ref}/${file}/raw`;
    const one = await t.request({ url: url('main', 'dir%2Fone.txt'), token: aliceToken });
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.body, 'one\n');
    assert.equal(one.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(one.headers['content-disposition'], 'inline; filename="one.txt"');
    const sha = (await runGit(['rev-parse', 'main'], { gitDir: repoOf(s.id) })).stdout.trim();
    const two = await t.request({ url: url(sha, 'two.md'), token: aliceToken });
    assert.deepEqual([two.statusCode, two.body], [200, '# two\n']);
    assert.deepEqual((await t.request({ url: url('nope', 'two.md'), token: aliceToken })).json(), { message: '404 Reference Not Found' });
    assert.deepEqual((await t.request({ url: url('main', 'three.txt'), token: aliceToken })).json(), { message: '404 File Not Found' });
    assert.deepEqual((await t.request({ url: url('main', 'dir'), token: aliceToken })).json(), { message: '404 File Not Found' });
    // Private: another user sees no such snippet.
    assert.deepEqual((await t.request({ url: url('main', 'two.md'), token: bobToken })).json(), { message: '404 Snippet Not Found' });
    assert.deepEqual((await t.request({ url: url('main', 'two.md') })).json(), { message: '404 Snippet Not Found' });
    const traversal = await t.request({ url: url('main', '..%2Fx'), token: aliceToken });
    assert.deepEqual([traversal.statusCode, traversal.json()], [400, { error: 'file_path should be a valid file path' }]);
  });

  it('refuses files the Service refuses, in its words, leaving nothing behind', async () => {
    const before = await snippetCount();
    const refused = async (payload: Record<string, unknown>, status: number, body: unknown) => {
      const res = await create(aliceToken, { title: 'Bad', ...payload });
      assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
    };
    const file = (file_path: string, content = 'x') => ({ file_path, content });
    await refused({ files: [file('a')], content: 'x', file_name: 'a' }, 400, { error: 'files, content are mutually exclusive' });
    await refused({}, 400, { error: 'files, content are missing, exactly one parameter must be provided' });
    // A blank `files` is Grape's nil: given without files (a fuzzed request once made this a 500).
    await refused({ files: '' }, 400, { error: 'files, content are missing, exactly one parameter must be provided' });
    await refused({ content: 'x' }, 400, { message: '400 Bad request - "file_name" not given' });
    await refused({ files: [file('a', ' \n')] }, 400, { error: 'files[0][content] is empty' });
    await refused({ files: [file('a'), { content: 'x' }] }, 400, { message: '400 Bad request - "files[1][file_path]" not given' });
    await refused({ files: [file('a'), file('')] }, 400, { error: 'files[1][file_path] is empty' });
    await refused({ files: [file('../etc/passwd')] }, 400, { error: 'files[0][file_path] should be a valid file path' });
    await refused({ files: [file('/etc/passwd')] }, 400, { error: 'files[0][file_path] should be a valid file path' });
    await refused({ files: [file('a%2F..%2F..%2Fx')] }, 400, { error: 'files[0][file_path] should be a valid file path' });
    await refused({ title: ' ', files: [file('a')] }, 400, { error: 'title is empty' });
    await refused({ files: [file('a\u0000')] }, 400, { error: 'files is invalid' });
    await refused({ files: [] }, 400, { message: { error: "Content can't be blank" } });
    await refused({ files: [file('x'.repeat(256))] }, 400, { message: { error: 'File name is too long (maximum is 255 characters)' } });
    // What the repository refuses: the same path twice, more than ten files, a path git cannot hold.
    const repositoryError = { message: { error: 'Repository Error creating the snippet' } };
    await refused({ files: [file('same.txt'), file('same.txt')] }, 400, repositoryError);
    await refused({ files: Array.from({ length: 11 }, (_, i) => file(`f${i}.txt`)) }, 400, repositoryError);
    await refused({ files: [file('a/.git/config')] }, 400, repositoryError);
    assert.equal(await snippetCount(), before);
    const left = await fs.readdir(path.join(t.dataDir, 'repositories', '@snippets'));
    const rows = await t.db.selectFrom('snippets').select('id').execute();
    assert.deepEqual(left.sort(), rows.map((r) => `${r.id}.git`).sort(), 'no repository without its snippet');
    // Ten files are allowed.
    const ten = await create(aliceToken, { title: 'Ten', files: Array.from({ length: 10 }, (_, i) => file(`f${i}.txt`)) });
    assert.equal(ten.statusCode, 201, ten.body);
  });

  it('updates files with create, update, move and delete actions, one commit each time', async () => {
    const files = [{ file_path: 'a.txt', content: 'a\n' }, { file_path: 'b.txt', content: 'b\n' }];
    const s = (await create(aliceToken, { title: 'Actions', files })).json();
    const res = await update(aliceToken, s.id, {
      files: [
        { action: 'update', file_path: 'a.txt', content: 'A\n' },
        { action: 'create', file_path: 'c/d.txt', content: 'd\n' },
        { action: 'move', previous_path: 'b.txt', file_path: 'e.txt' },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(paths(res.json()), ['a.txt', 'c/d.txt', 'e.txt']);
    assert.deepEqual(await tree(s.id), ['a.txt', 'c/d.txt', 'e.txt']);
    assert.equal(await show(s.id, 'a.txt'), 'A\n');
    assert.equal(await show(s.id, 'e.txt'), 'b\n', 'a move without content keeps it');
    assert.equal((await runGit(['log', '-1', '--format=%s', 'main'], { gitDir: repoOf(s.id) })).stdout, 'Update snippet\n');
    assert.equal(await commits(s.id), 2);
    assert.equal((await t.request({ url: `/api/v4/snippets/${s.id}/raw`, token: aliceToken })).body, 'A\n');

    // Files sent without a path are named snippetfile<N>.txt, counting on from the highest.
    const unnamed = await update(aliceToken, s.id, {
      files: [{ action: 'create', content: 'one' }, { action: 'create', file_path: '', content: 'two' }],
    });
    assert.deepEqual(paths(unnamed.json()), ['a.txt', 'c/d.txt', 'e.txt', 'snippetfile1.txt', 'snippetfile2.txt']);
    const more = await update(aliceToken, s.id, { files: [{ action: 'move', previous_path: 'e.txt', content: 'moved' }] });
    assert.deepEqual(paths(more.json()), ['a.txt', 'c/d.txt', 'snippetfile1.txt', 'snippetfile2.txt', 'snippetfile3.txt']);
    assert.equal(await show(s.id, 'snippetfile3.txt'), 'moved');

    // Deleting the first file makes the next one the snippet's name and raw content.
    const deleted = await update(aliceToken, s.id, { files: [{ action: 'delete', file_path: 'a.txt' }] });
    assert.equal(deleted.json().file_name, 'c/d.txt');
    assert.equal((await t.request({ url: `/api/v4/snippets/${s.id}/raw`, token: aliceToken })).body, 'd\n');

    // Other attributes alone commit nothing.
    const before = await commits(s.id);
    const titled = await update(aliceToken, s.id, { title: 'Renamed', visibility: 'internal' });
    assert.deepEqual([titled.json().title, titled.json().visibility], ['Renamed', 'internal']);
    assert.equal(await commits(s.id), before);
  });

  it('refuses updates the Service refuses, in its words, changing nothing', async () => {
    const files = [{ file_path: 'a.txt', content: 'a' }, { file_path: 'b.txt', content: 'b' }];
    const s = (await create(aliceToken, { title: 'Strict', visibility: 'public', files })).json();
    const refused = async (payload: Record<string, unknown>, status: number, body: unknown, id = s.id, token = aliceToken) => {
      const res = await update(token, id, payload);
      assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
    };
    const invalidData = { message: { error: 'Snippet actions have invalid data' } };
    await refused({ files: [{ action: 'update', file_path: 'a.txt' }] }, 422, invalidData);
    await refused({ files: [{ action: 'update', file_path: 'a.txt', previous_path: 'b.txt', content: 'x' }] }, 422, invalidData);
    await refused({ files: [{ action: 'move', file_path: 'a.txt', previous_path: 'a.txt' }] }, 422, invalidData);
    await refused({ files: [{ action: 'move', file_path: 'c.txt' }] }, 422, invalidData);
    await refused({ files: [{ action: 'delete' }] }, 422, invalidData);
    await refused({ files: [{ action: 'create', file_path: 'c.txt', content: '  ' }] }, 422, invalidData);
    await refused({ files: [{ action: 'rename', file_path: 'a.txt' }] }, 400, { error: 'files[0][action] does not have a valid value' });
    await refused({ files: [{ file_path: 'a.txt', content: 'x' }] }, 400, { message: '400 Bad request - "files[0][action]" not given' });
    const remove = (file_path: string) => ({ action: 'delete', file_path });
    await refused({ files: [remove('../a.txt')] }, 400, { error: 'files[0][file_path] should be a valid file path' });
    await refused({ files: [remove('a.txt')], content: 'x' }, 400, { error: 'files, content are mutually exclusive' });
    await refused({ files: [remove('a.txt')], file_name: 'x' }, 400, { error: 'files, file_name are mutually exclusive' });
    const none = 'content, description, files, file_name, title, visibility are missing, at least one parameter must be provided';
    await refused({}, 400, { error: none });
    await refused({ content: '' }, 400, { error: 'content is empty' });
    await refused({ title: '' }, 400, { error: 'title is empty' });
    // The parameters are checked before the snippet is looked up (Grape validates first).
    await refused({ files: [{ action: 'rename' }] }, 400, { error: 'files[0][action] does not have a valid value' }, 999999);
    await refused({ title: 'x' }, 404, { message: '404 Snippet Not Found' }, 999999);
    const otherToken = await createToken(t.db, await createUser(t.db));
    await refused({ files: [remove('a.txt')] }, 403, { message: '403 Forbidden' }, s.id, otherToken);
    const multiple = { message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' } };
    await refused({ content: 'x' }, 400, multiple);
    await refused({ file_name: 'x.txt' }, 400, multiple);
    const repositoryError = { message: { error: 'Repository Error updating the snippet' } };
    await refused({ files: [{ action: 'create', file_path: 'a.txt', content: 'x' }] }, 400, repositoryError);
    await refused({ files: [{ action: 'update', file_path: 'zz.txt', content: 'x' }] }, 400, repositoryError);
    await refused({ files: [{ action: 'delete', file_path: 'zz.txt' }] }, 400, repositoryError);
    const nine = Array.from({ length: 9 }, (_, i) => ({ action: 'create', file_path: `n${i}`, content: 'n' }));
    await refused({ title: 'Changed?', files: nine }, 400, repositoryError);
    const after = await t.request({ url: `/api/v4/snippets/${s.id}`, token: aliceToken });
    assert.deepEqual([after.json().title, paths(after.json())], ['Strict', ['a.txt', 'b.txt']]);
    assert.deepEqual(await tree(s.id), ['a.txt', 'b.txt']);
    assert.equal(await commits(s.id), 1);
  });

  it('updates a one-file snippet the older way, and removes every file when told to', async () => {
    const s = (await create(aliceToken, { title: 'Old', file_name: 'old.txt', content: 'old' })).json();
    const renamed = await update(aliceToken, s.id, { file_name: 'new.txt' });
    assert.deepEqual(paths(renamed.json()), ['new.txt']);
    assert.equal(await show(s.id, 'new.txt'), 'old');
    const same = await update(aliceToken, s.id, { file_name: 'new.txt', content: 'fresh' });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(await show(s.id, 'new.txt'), 'fresh');
    // With every file deleted, the Service keeps the name it had.
    const empty = await update(aliceToken, s.id, { files: [{ action: 'delete', file_path: 'new.txt' }] });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual([empty.json().file_name, empty.json().files], ['new.txt', []]);
    assert.deepEqual(await tree(s.id), []);
  });
});
