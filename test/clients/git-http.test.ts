/**
 * The real git CLI over smart HTTP (issue 3, Done when): clone an empty project, push commits and
 * a branch, clone again and compare heads; refused push with a read_repository token; refused
 * clone without credentials on a private project; anonymous clone of a public project; a
 * read-only repository refusing a push.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import zlib from 'node:zlib';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { cloneUrl, git, startListeningApp, tempDir } from '../helpers/git.ts';
import type { TestApp } from '../helpers/app.ts';

describe('git over smart HTTP', () => {
  let t: TestApp & { baseUrl: string };
  let work: string;
  let alice: UserRow;
  let aliceToken: string;

  before(async () => {
    t = await startListeningApp();
    work = await tempDir();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice, { scopes: ['api'] });
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function createProject(token: string, payload: Record<string, unknown>) {
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number; path_with_namespace: string; http_url_to_repo: string };
  }

  async function commitFile(dir: string, file: string, content: string, message: string) {
    await fs.writeFile(path.join(dir, file), content);
    assert.equal((await git(['add', file], dir)).code, 0);
    const r = await git(['commit', '-q', '-m', message], dir);
    assert.equal(r.code, 0, r.stderr);
  }

  it('clones an empty project, pushes commits and a branch, and clones the same heads back', async () => {
    const project = await createProject(aliceToken, { name: 'Roundtrip' });
    assert.equal(project.http_url_to_repo, `${t.baseUrl}/${project.path_with_namespace}.git`);
    const creds = { username: alice.username, password: aliceToken };

    const first = path.join(work, 'first');
    const clone = await git(['clone', cloneUrl(t.baseUrl, project.path_with_namespace, creds), first], work);
    assert.equal(clone.code, 0, clone.stderr);
    assert.match(clone.stderr, /empty repository/);

    await git(['checkout', '-q', '-b', 'main'], first);
    await commitFile(first, 'README.md', '# Roundtrip\n', 'First commit');
    await commitFile(first, 'a.txt', 'a\n', 'Second commit');
    const pushMain = await git(['push', '-q', 'origin', 'main'], first);
    assert.equal(pushMain.code, 0, pushMain.stderr);
    await git(['checkout', '-q', '-b', 'feature'], first);
    await commitFile(first, 'b.txt', 'b\n', 'On a branch');
    const pushBranch = await git(['push', '-q', 'origin', 'feature'], first);
    assert.equal(pushBranch.code, 0, pushBranch.stderr);

    const shown = (await t.request({ url: `/api/v4/projects/${project.id}`, token: aliceToken })).json();
    assert.equal(shown.default_branch, 'main');
    assert.equal(shown.empty_repo, false);
    assert.equal(shown.readme_url, `${t.baseUrl}/${project.path_with_namespace}/-/blob/main/README.md`);
    assert.ok(shown.last_activity_at > shown.created_at);

    const second = path.join(work, 'second');
    const again = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, creds), second], work);
    assert.equal(again.code, 0, again.stderr);
    const heads = async (dir: string, refs: string[]) => (await git(['rev-parse', ...refs], dir)).stdout.trim();
    assert.equal(await heads(second, ['HEAD', 'origin/feature']), await heads(first, ['main', 'feature']));
    assert.equal((await git(['symbolic-ref', '--short', 'HEAD'], second)).stdout.trim(), 'main');
  });

  it('refuses a push with a read_repository token but lets it clone', async () => {
    const project = await createProject(aliceToken, { name: 'Read only token', initialize_with_readme: true });
    const readToken = await createToken(t.db, alice, { scopes: ['read_repository'] });
    const dir = path.join(work, 'readtoken');
    const clone = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, { username: 'anything', password: readToken }), dir], work);
    assert.equal(clone.code, 0, clone.stderr);
    await commitFile(dir, 'c.txt', 'c\n', 'Refused');
    const push = await git(['push', 'origin', 'main'], dir);
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /You are not allowed to push code to this project\./);
    assert.match(push.stderr, /403/);
  });

  it('refuses to clone a private project without credentials, and asks for them', async () => {
    const project = await createProject(aliceToken, { name: 'Private one', initialize_with_readme: true });
    const clone = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace), path.join(work, 'noauth')], work);
    assert.notEqual(clone.code, 0);
    assert.match(clone.stderr, /could not read Username|Authentication failed/);
    const res = await fetch(`${t.baseUrl}/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="kiln"');

    const wrong = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, { username: 'x', password: 'not-a-token' }), path.join(work, 'wrong')], work);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /Authentication failed|HTTP Basic: Access denied/);
  });

  it('clones a public project without credentials but refuses an anonymous push', async () => {
    const project = await createProject(aliceToken, { name: 'Open', visibility: 'public', initialize_with_readme: true });
    const dir = path.join(work, 'public');
    const clone = await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace), dir], work);
    assert.equal(clone.code, 0, clone.stderr);
    assert.match(await fs.readFile(path.join(dir, 'README.md'), 'utf8'), /# Open/);
    await commitFile(dir, 'x.txt', 'x\n', 'Anonymous');
    const push = await git(['push', 'origin', 'main'], dir);
    assert.notEqual(push.code, 0);
  });

  it('refuses pushes to a read-only repository with a clear message', async () => {
    const project = await createProject(aliceToken, { name: 'Moving', initialize_with_readme: true });
    const creds = { username: alice.username, password: aliceToken };
    const dir = path.join(work, 'readonly');
    assert.equal((await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, creds), dir], work)).code, 0);
    await t.db.updateTable('projects').set({ read_only: 1 }).where('id', '=', project.id).execute();
    await commitFile(dir, 'y.txt', 'y\n', 'While moving');
    const push = await git(['push', 'origin', 'main'], dir);
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /The repository is temporarily read-only\. Please try again later\./);
    await t.db.updateTable('projects').set({ read_only: 0 }).where('id', '=', project.id).execute();
    const retry = await git(['push', '-q', 'origin', 'main'], dir);
    assert.equal(retry.code, 0, retry.stderr);
  });

  it('lets a reporter clone but not push, and a developer push beside the protected default branch', async () => {
    const project = await createProject(aliceToken, { name: 'Team', initialize_with_readme: true });
    const reporter = await createUser(t.db);
    const developer = await createUser(t.db);
    for (const [user, level] of [[reporter, 20], [developer, 30]] as const) {
      const res = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: aliceToken, payload: { user_id: user.id, access_level: level } });
      assert.equal(res.statusCode, 201, res.body);
    }
    const reporterCreds = { username: reporter.username, password: await createToken(t.db, reporter) };
    const developerCreds = { username: developer.username, password: await createToken(t.db, developer) };
    const rdir = path.join(work, 'reporter');
    assert.equal((await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, reporterCreds), rdir], work)).code, 0);
    await commitFile(rdir, 'r.txt', 'r\n', 'Reporter');
    const refused = await git(['push', 'origin', 'main'], rdir);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /You are not allowed to push code to this project\./);
    const ddir = path.join(work, 'developer');
    assert.equal((await git(['clone', '-q', cloneUrl(t.baseUrl, project.path_with_namespace, developerCreds), ddir], work)).code, 0);
    await commitFile(ddir, 'd.txt', 'd\n', 'Developer');
    // The default branch is protected (default_branch_protection 2): a Developer pushes beside it.
    const protectedPush = await git(['push', '-q', 'origin', 'main'], ddir);
    assert.match(protectedPush.stderr, /You are not allowed to push code to protected branches on this project\./);
    const pushed = await git(['push', '-q', 'origin', 'main:topic'], ddir);
    assert.equal(pushed.code, 0, pushed.stderr);
  });

  it('serves group wikis and snippet repositories', async () => {
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: aliceToken, payload: { name: 'Wiki group', path: `wiki-group-${alice.id}` } });
    assert.equal(group.statusCode, 201, group.body);
    const creds = { username: alice.username, password: aliceToken };
    const wdir = path.join(work, 'wiki');
    const wiki = await git(['clone', '-q', `${t.baseUrl.replace('http://', `http://${creds.username}:${creds.password}@`)}/${group.json().full_path}.wiki.git`, wdir], work);
    assert.equal(wiki.code, 0, wiki.stderr);

    const snippet = await t.request({ method: 'POST', url: '/api/v4/snippets', token: aliceToken, payload: { title: 'Hello', file_name: 'hello.rb', content: 'puts 1\n' } });
    assert.equal(snippet.statusCode, 201, snippet.body);
    const sdir = path.join(work, 'snippet');
    const cloned = await git(['clone', '-q', cloneUrl(t.baseUrl, `snippets/${snippet.json().id}`, creds), sdir], work);
    assert.equal(cloned.code, 0, cloned.stderr);
    assert.equal(await fs.readFile(path.join(sdir, 'hello.rb'), 'utf8'), 'puts 1\n');
  });

  it('accepts gzip-encoded upload-pack requests', async () => {
    const project = await createProject(aliceToken, { name: 'Gzip', initialize_with_readme: true });
    const auth = `Basic ${Buffer.from(`${alice.username}:${aliceToken}`).toString('base64')}`;
    const refs = await fetch(`${t.baseUrl}/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`, { headers: { authorization: auth } });
    assert.equal(refs.status, 200);
    assert.equal(refs.headers.get('content-type'), 'application/x-git-upload-pack-advertisement');
    const sha = /([0-9a-f]{40}) refs\/heads\/main/.exec(await refs.text())![1];
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const body = zlib.gzipSync(`${pkt(`want ${sha}\n`)}0000${pkt('done\n')}`);
    const res = await fetch(`${t.baseUrl}/${project.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST', body, headers: { authorization: auth, 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
    });
    assert.equal(res.status, 200);
    const pack = Buffer.from(await res.arrayBuffer());
    assert.equal(pack.subarray(0, 8).toString(), '0008NAK\n');
    assert.ok(pack.includes(Buffer.from('PACK')));
  });
});
