/** Personal snippets: create (a real commit in the snippet's repository), show, raw, list, update, delete. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { runGit } from '../../src/domain/repositories/git-command.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('snippets', () => {
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
  after(async () => { await t.close(); });

  const create = (token: string | undefined, payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v4/snippets', token, payload });
  const repoOf = (id: number) => path.join(t.dataDir, 'repositories', '@snippets', `${id}.git`);

  it('creates a snippet whose file is a commit in its own repository', async () => {
    const res = await create(aliceToken, { title: 'Hello', file_name: 'hello.py', content: 'print("hi")\n', description: 'greeting', visibility: 'internal' });
    assert.equal(res.statusCode, 201, res.body);
    const s = res.json();
    assert.equal(s.title, 'Hello');
    assert.equal(s.description, 'greeting');
    assert.equal(s.visibility, 'internal');
    assert.equal(s.file_name, 'hello.py');
    assert.equal(s.author.id, alice.id);
    assert.equal(s.project_id, null);
    assert.equal(s.web_url, `http://kiln.test/-/snippets/${s.id}`);
    assert.equal(s.raw_url, `http://kiln.test/-/snippets/${s.id}/raw`);
    assert.equal(s.http_url_to_repo, `http://kiln.test/snippets/${s.id}.git`);
    assert.deepEqual(s.files, [{ path: 'hello.py', raw_url: `http://kiln.test/-/snippets/${s.id}/raw/main/hello.py` }]);
    const shown = await runGit(['show', 'main:hello.py'], { gitDir: repoOf(s.id) });
    assert.equal(shown.stdout, 'print("hi")\n');
    const author = await runGit(['log', '-1', '--format=%an <%ae>%n%s', 'main'], { gitDir: repoOf(s.id) });
    assert.equal(author.stdout, `${alice.name} <${alice.email}>\nInitial commit\n`);
    const row = await t.db.selectFrom('snippets').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.equal(row.repository_storage, 'default');
    assert.equal(row.disk_path, `@snippets/${s.id}.git`);
  });

  it('keeps where a snippet was submitted from, for administrators only (user_agent_detail)', async () => {
    const res = await t.request({
      method: 'POST', url: '/api/v4/snippets', token: aliceToken, headers: { 'user-agent': 'python-gitlab/3.12.0' },
      payload: { title: 'Agent', file_name: 'a.txt', content: 'x' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const url = `/api/v4/snippets/${res.json().id}/user_agent_detail`;
    const asAdmin = await t.request({ url, token: ROOT_TOKEN });
    assert.equal(asAdmin.statusCode, 200, asAdmin.body);
    assert.equal(asAdmin.json().user_agent, 'python-gitlab/3.12.0');
    assert.equal(asAdmin.json().akismet_submitted, false);
    assert.equal(typeof asAdmin.json().ip_address, 'string');
    assert.deepEqual((await t.request({ url, token: aliceToken })).json(), { message: '403 Forbidden' });
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/snippets/${res.json().id}`, token: aliceToken })).statusCode, 204);
  });

  it('validates input', async () => {
    assert.deepEqual((await create(aliceToken, { file_name: 'a', content: 'x' })).json(), { message: '400 Bad request - "title" not given' });
    // A path git refuses is the repository's refusal, without detail (Snippets::BaseService).
    const traversal = await create(aliceToken, { title: 't', file_name: '../x', content: 'x' });
    assert.deepEqual(traversal.json(), { message: { error: 'Repository Error creating the snippet' } });
    assert.deepEqual((await create(aliceToken, { title: 't', file_name: 'a', content: '' })).json(), { error: 'content is empty' });
    assert.deepEqual((await create(aliceToken, { title: 't', file_name: 'a', content: 'x', visibility: 'open' })).json(), { error: 'visibility does not have a valid value' });
    assert.equal((await create(undefined, { title: 't', file_name: 'a', content: 'x' })).statusCode, 401);
  });

  it('shows snippets and their raw file by visibility', async () => {
    const priv = (await create(aliceToken, { title: 'Private', file_name: 'p.txt', content: 'secret\n' })).json();
    const pub = (await create(aliceToken, { title: 'Public', file_name: 'q.txt', content: 'open\n', visibility: 'public' })).json();
    const raw = await t.request({ url: `/api/v4/snippets/${pub.id}/raw` });
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['content-type'], 'text/plain');
    assert.equal(raw.body, 'open\n');
    assert.equal((await t.request({ url: `/api/v4/snippets/${pub.id}` })).json().title, 'Public');
    assert.deepEqual((await t.request({ url: `/api/v4/snippets/${priv.id}`, token: bobToken })).json(), { message: '404 Snippet Not Found' });
    assert.equal((await t.request({ url: `/api/v4/snippets/${priv.id}/raw` })).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/snippets/${priv.id}/raw`, token: aliceToken })).body, 'secret\n');
    assert.equal((await t.request({ url: `/api/v4/snippets/${priv.id}`, token: ROOT_TOKEN })).statusCode, 200);
    assert.equal((await t.request({ url: '/api/v4/snippets/999999', token: aliceToken })).statusCode, 404);
  });

  it("lists the caller's snippets, newest first", async () => {
    const res = await t.request({ url: '/api/v4/snippets', token: aliceToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((s: { title: string }) => s.title), ['Public', 'Private', 'Hello']);
    assert.equal(res.headers['x-total'], '3');
    assert.deepEqual((await t.request({ url: '/api/v4/snippets', token: bobToken })).json(), []);
    assert.equal((await t.request({ url: '/api/v4/snippets' })).statusCode, 401);
  });

  it('updates the file with a new commit; only the author or an administrator may', async () => {
    const s = (await create(aliceToken, { title: 'Edit me', file_name: 'e.txt', content: 'one\n', visibility: 'public' })).json();
    assert.deepEqual((await t.request({ method: 'PUT', url: `/api/v4/snippets/${s.id}`, token: bobToken, payload: { title: 'x' } })).json(), { message: '403 Forbidden' });
    const res = await t.request({ method: 'PUT', url: `/api/v4/snippets/${s.id}`, token: aliceToken, payload: { content: 'two\n', file_name: 'f.txt', title: 'Edited' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().title, 'Edited');
    assert.equal(res.json().file_name, 'f.txt');
    assert.equal((await t.request({ url: `/api/v4/snippets/${s.id}/raw` })).body, 'two\n');
    const tree = await runGit(['ls-tree', '--name-only', 'main'], { gitDir: repoOf(s.id) });
    assert.equal(tree.stdout, 'f.txt\n');
    const count = await runGit(['rev-list', '--count', 'main'], { gitDir: repoOf(s.id) });
    assert.equal(count.stdout.trim(), '2');
  });

  it('deletes a snippet with its repository', async () => {
    const s = (await create(aliceToken, { title: 'Gone', file_name: 'g.txt', content: 'g\n', visibility: 'public' })).json();
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/snippets/${s.id}`, token: bobToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/snippets/${s.id}`, token: aliceToken })).statusCode, 204);
    assert.equal((await t.request({ url: `/api/v4/snippets/${s.id}`, token: aliceToken })).statusCode, 404);
    await assert.rejects(fs.stat(repoOf(s.id)));
  });
});
