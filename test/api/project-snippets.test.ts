/**
 * Project snippets (issue 29, item 9): /projects/:id/snippets CRUD, raw and file reads, the
 * administrators' user_agent_detail, ProjectSnippetPolicy by role and snippet visibility, the
 * project's snippets feature level, the snippet's own git repository under the project's path,
 * and the personal snippet routes no longer reaching a project's snippets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import type { UserRow } from '../../src/db/types.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { cloneUrl, git, tempDir } from '../helpers/git.ts';

interface ApiSnippet {
  id: number; title: string; visibility: string; project_id: number; web_url: string; raw_url: string; http_url_to_repo: string;
  ssh_url_to_repo: string; file_name: string; files: { path: string; raw_url: string }[]; author: { id: number };
}

describe('project snippets', () => {
  let t: ListeningTestApp;
  let owner: UserRow;
  const tokens: Record<string, string> = {};
  let projectId: number;
  let fullPath: string;

  before(async () => {
    t = await startListeningApp();
    owner = await createUser(t.db);
    tokens.owner = await createToken(t.db, owner);
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: tokens.owner, payload: { name: 'snippety', visibility: 'public' } });
    assert.equal(res.statusCode, 201, res.body);
    ({ id: projectId, path_with_namespace: fullPath } = res.json() as { id: number; path_with_namespace: string });
    for (const [role, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
      const user = await createUser(t.db);
      tokens[role] = await createToken(t.db, user);
      const add = await t.request({
        method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: tokens.owner, payload: { user_id: user.id, access_level: level },
      });
      assert.equal(add.statusCode, 201, add.body);
    }
    tokens.stranger = await createToken(t.db, await createUser(t.db));
    tokens.admin = await createToken(t.db, await createAdmin(t.db));
  });
  after(async () => { await t?.close(); });

  const base = () => `/api/v4/projects/${projectId}/snippets`;
  const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token?: string, payload?: Record<string, unknown>) =>
    t.request({ method, url, ...(token ? { token } : {}), ...(payload ? { payload } : {}), headers: { 'user-agent': 'kiln-test-agent/1.0' } });
  const create = async (token: string, visibility: string, title = `snippet ${visibility}`) => {
    const res = await req('POST', base(), token, { title, visibility, files: [{ file_path: 'hello.rb', content: `puts "${visibility}"` }] });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as ApiSnippet;
  };

  it('creates a snippet for Reporters and up, with the project in its URLs', async () => {
    const s = await create(tokens.reporter, 'public', 'Hello');
    assert.equal(s.project_id, projectId);
    assert.equal(s.title, 'Hello');
    assert.equal(s.visibility, 'public');
    assert.equal(s.web_url, `${t.url}/${fullPath}/-/snippets/${s.id}`);
    assert.equal(s.raw_url, `${t.url}/${fullPath}/-/snippets/${s.id}/raw`);
    assert.equal(s.http_url_to_repo, `${t.url}/${fullPath}/snippets/${s.id}.git`);
    assert.equal(s.ssh_url_to_repo, `git@127.0.0.1:${fullPath}/snippets/${s.id}.git`);
    assert.equal(s.file_name, 'hello.rb');
    assert.deepEqual(s.files, [{ path: 'hello.rb', raw_url: `${t.url}/${fullPath}/-/snippets/${s.id}/raw/main/hello.rb` }]);
    const legacy = await req('POST', base(), tokens.developer, { title: 'Old style', visibility: 'private', file_name: 'a.txt', content: 'a' });
    assert.equal(legacy.statusCode, 201, legacy.body);

    for (const role of ['guest', 'stranger']) {
      assert.equal((await req('POST', base(), tokens[role], { title: 'x', visibility: 'public', file_name: 'a', content: 'a' })).statusCode, 403, role);
    }
    assert.equal((await req('POST', base(), undefined, { title: 'x', visibility: 'public', file_name: 'a', content: 'a' })).statusCode, 401);
    const noVisibility = await req('POST', base(), tokens.reporter, { title: 'x', file_name: 'a', content: 'a' });
    assert.equal(noVisibility.statusCode, 400);
    assert.deepEqual(noVisibility.json(), { message: '400 Bad request - "visibility" not given' });
    const noFiles = await req('POST', base(), tokens.reporter, { title: 'x', visibility: 'public' });
    assert.equal(noFiles.statusCode, 400);
  });

  it('lists all snippets to members, by visibility (and their own) to others, newest first', async () => {
    const pub = await create(tokens.developer, 'public');
    const internal = await create(tokens.developer, 'internal');
    const priv = await create(tokens.developer, 'private');
    const memberList = (await req('GET', `${base()}?per_page=100`, tokens.guest)).json() as ApiSnippet[];
    const ids = memberList.map((s) => s.id);
    assert.deepEqual(ids.slice(0, 3), [priv.id, internal.id, pub.id]);
    assert.deepEqual([...ids].sort((a, b) => b - a), ids);
    const strangerList = (await req('GET', `${base()}?per_page=100`, tokens.stranger)).json() as ApiSnippet[];
    assert.ok(strangerList.some((s) => s.id === internal.id));
    assert.ok(strangerList.some((s) => s.id === pub.id));
    assert.ok(strangerList.every((s) => s.visibility !== 'private'));
    assert.equal((await req('GET', base())).statusCode, 401);
  });

  it('reads one snippet, its raw text and one file by the snippet policy', async () => {
    const pub = await create(tokens.reporter, 'public');
    const internal = await create(tokens.reporter, 'internal');
    const priv = await create(tokens.reporter, 'private');
    assert.equal((await req('GET', `${base()}/${pub.id}`)).statusCode, 200);
    assert.equal((await req('GET', `${base()}/${internal.id}`)).statusCode, 404);
    assert.equal((await req('GET', `${base()}/${internal.id}`, tokens.stranger)).statusCode, 200);
    const hidden = await req('GET', `${base()}/${priv.id}`, tokens.stranger);
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Snippet Not Found' });
    assert.equal((await req('GET', `${base()}/${priv.id}`, tokens.guest)).statusCode, 200);
    assert.equal((await req('GET', `${base()}/999999`, tokens.owner)).statusCode, 404);

    const raw = await req('GET', `${base()}/${priv.id}/raw`, tokens.guest);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'puts "private"');
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    assert.equal((await req('GET', `${base()}/${priv.id}/raw`, tokens.stranger)).statusCode, 404);
    const file = await req('GET', `${base()}/${pub.id}/files/main/hello.rb/raw`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.body, 'puts "public"');
    assert.deepEqual((await req('GET', `${base()}/${pub.id}/files/nope/hello.rb/raw`)).json(), { message: '404 Reference Not Found' });
    assert.deepEqual((await req('GET', `${base()}/${pub.id}/files/main/other.rb/raw`)).json(), { message: '404 File Not Found' });
  });

  it('lets the author and Maintainers change and delete a snippet, nobody else', async () => {
    const s = await create(tokens.reporter, 'public');
    const byAuthor = await req('PUT', `${base()}/${s.id}`, tokens.reporter, { title: 'Renamed', content: 'puts 1' });
    assert.equal(byAuthor.statusCode, 200, byAuthor.body);
    assert.equal((byAuthor.json() as ApiSnippet).title, 'Renamed');
    assert.equal((await req('GET', `${base()}/${s.id}/raw`)).body, 'puts 1');
    for (const role of ['developer', 'guest', 'stranger']) {
      assert.equal((await req('PUT', `${base()}/${s.id}`, tokens[role], { title: 'no' })).statusCode, 403, role);
      assert.equal((await req('DELETE', `${base()}/${s.id}`, tokens[role])).statusCode, 403, role);
    }
    const byMaintainer = await req('PUT', `${base()}/${s.id}`, tokens.maintainer, { visibility: 'internal' });
    assert.equal((byMaintainer.json() as ApiSnippet).visibility, 'internal');
    assert.equal((await req('PUT', `${base()}/${s.id}`, tokens.maintainer, {})).statusCode, 400);
    assert.equal((await req('DELETE', `${base()}/${s.id}`, tokens.maintainer)).statusCode, 204);
    assert.equal((await req('GET', `${base()}/${s.id}`, tokens.owner)).statusCode, 404);
    const own = await create(tokens.developer, 'private');
    assert.equal((await req('DELETE', `${base()}/${own.id}`, tokens.developer)).statusCode, 204);
  });

  it('shows administrators where a snippet was created from', async () => {
    const s = await create(tokens.reporter, 'public');
    const detail = await req('GET', `${base()}/${s.id}/user_agent_detail`, tokens.admin);
    assert.equal(detail.statusCode, 200, detail.body);
    assert.deepEqual(detail.json(), { user_agent: 'kiln-test-agent/1.0', ip_address: '127.0.0.1', akismet_submitted: false });
    assert.equal((await req('GET', `${base()}/${s.id}/user_agent_detail`, tokens.owner)).statusCode, 403);
    assert.equal((await req('GET', `${base()}/${s.id}/user_agent_detail`)).statusCode, 401);
    assert.deepEqual((await req('GET', `${base()}/999999/user_agent_detail`, tokens.admin)).json(), { message: '404 Not found' });
    await t.db.deleteFrom('user_agent_details').where('subject_id', '=', s.id).execute();
    assert.deepEqual((await req('GET', `${base()}/${s.id}/user_agent_detail`, tokens.admin)).json(), { message: '404 UserAgentDetail Not Found' });
  });

  it("follows the project's snippets feature level: disabled for everyone, private for members", async () => {
    const s = await create(tokens.reporter, 'public');
    const setLevel = async (level: string) => {
      const res = await req('PUT', `/api/v4/projects/${projectId}`, tokens.owner, { snippets_access_level: level });
      assert.equal(res.statusCode, 200, res.body);
    };
    try {
      await setLevel('private');
      assert.equal((await req('GET', `${base()}/${s.id}`, tokens.stranger)).statusCode, 403);
      assert.equal((await req('GET', `${base()}/${s.id}`)).statusCode, 403);
      assert.equal((await req('GET', `${base()}/${s.id}`, tokens.guest)).statusCode, 200);
      await setLevel('disabled');
      const own = (await req('GET', '/api/v4/snippets?per_page=100', tokens.reporter)).json() as ApiSnippet[];
      assert.ok(own.every((p) => p.id !== s.id), "a disabled feature hides them from their author's list too");
      for (const role of ['owner', 'admin', 'guest']) assert.equal((await req('GET', base(), tokens[role])).statusCode, 403, role);
      assert.equal((await req('POST', base(), tokens.owner, { title: 'x', visibility: 'public', file_name: 'a', content: 'a' })).statusCode, 403);
    } finally {
      await setLevel('enabled');
    }
    assert.equal((await req('GET', `${base()}/${s.id}`, tokens.stranger)).statusCode, 200);
  });

  it("answers 404 for a private project's snippets to non-members", async () => {
    const res = await req('POST', '/api/v4/projects', tokens.owner, { name: 'hidden', visibility: 'private' });
    const hidden = (res.json() as { id: number }).id;
    const s = await req('POST', `/api/v4/projects/${hidden}/snippets`, tokens.owner, { title: 'x', visibility: 'public', file_name: 'a', content: 'a' });
    assert.equal(s.statusCode, 201);
    const read = await req('GET', `/api/v4/projects/${hidden}/snippets/${(s.json() as ApiSnippet).id}`, tokens.stranger);
    assert.deepEqual([read.statusCode, read.json()], [404, { message: '404 Project Not Found' }]);
  });

  it("keeps project snippets out of the personal snippet routes but in their author's list", async () => {
    const s = await create(tokens.reporter, 'public');
    assert.equal((await req('GET', `/api/v4/snippets/${s.id}`, tokens.reporter)).statusCode, 404);
    assert.equal((await req('GET', `/api/v4/snippets/${s.id}/raw`, tokens.reporter)).statusCode, 404);
    assert.equal((await req('PUT', `/api/v4/snippets/${s.id}`, tokens.reporter, { title: 'x' })).statusCode, 404);
    assert.equal((await req('DELETE', `/api/v4/snippets/${s.id}`, tokens.reporter)).statusCode, 404);
    const publicList = (await req('GET', '/api/v4/snippets/public?per_page=100', tokens.reporter)).json() as ApiSnippet[];
    assert.ok(publicList.every((p) => p.id !== s.id));
    // The caller's own list holds them (SnippetsFinder with `author`), at their project's URLs.
    const own = (await req('GET', '/api/v4/snippets?per_page=100', tokens.reporter)).json() as ApiSnippet[];
    const listed = own.find((p) => p.id === s.id);
    assert.equal(listed?.project_id, projectId);
    assert.equal(listed?.web_url, `${t.url}/${fullPath}/-/snippets/${s.id}`);
    assert.equal(listed?.http_url_to_repo, `${t.url}/${fullPath}/snippets/${s.id}.git`);
  });

  it("hands a deleted user's project snippets to the ghost user, and removes their events", async () => {
    const leaver = await createUser(t.db);
    const leaverToken = await createToken(t.db, leaver);
    await req('POST', `/api/v4/projects/${projectId}/members`, tokens.owner, { user_id: leaver.id, access_level: 20 });
    const s = await create(leaverToken, 'public');
    const personal = await req('POST', '/api/v4/snippets', leaverToken, { title: 'mine', file_name: 'm.txt', content: 'm', visibility: 'public' });
    assert.equal(personal.statusCode, 201);
    assert.equal((await req('DELETE', `/api/v4/users/${leaver.id}`, tokens.admin)).statusCode, 204);
    const ghost = await t.db.selectFrom('users').select('id').where('user_type', '=', 5).executeTakeFirstOrThrow();
    const kept = await req('GET', `${base()}/${s.id}`, tokens.owner);
    assert.equal(kept.statusCode, 200);
    assert.equal((kept.json() as ApiSnippet).author.id, ghost.id);
    assert.equal(await t.db.selectFrom('snippets').select('id').where('id', '=', (personal.json() as { id: number }).id).executeTakeFirst(), undefined);
    // Users::MigrateToGhostUserService moves no events: the user's 'joined' goes with the account.
    assert.deepEqual(await t.db.selectFrom('events').select('id').where('author_id', '=', leaver.id).execute(), []);
  });

  it("serves the snippet's repository under the project's path, to those who may read it", async () => {
    const pub = await create(tokens.reporter, 'public');
    const priv = await create(tokens.reporter, 'private');
    const dir = await tempDir('kiln-project-snippet-');
    try {
      const clone = await git(['clone', '--quiet', cloneUrl(t.url, `${fullPath}/snippets/${pub.id}`), 'pub'], dir);
      assert.equal(clone.code, 0, clone.stderr);
      assert.equal(await fs.readFile(`${dir}/pub/hello.rb`, 'utf8'), 'puts "public"');
      const refused = await git(['clone', '--quiet', cloneUrl(t.url, `${fullPath}/snippets/${priv.id}`), 'priv'], dir);
      assert.notEqual(refused.code, 0);
      // The personal path does not reach a project's snippet.
      const personal = await git(['clone', '--quiet', cloneUrl(t.url, `snippets/${pub.id}`), 'personal'], dir);
      assert.notEqual(personal.code, 0);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
