/** Projects at the HTTP boundary: create, show, update, archive, delete (CONTRACT §4; issue 3). */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('projects', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
  });
  after(async () => { await t.close(); });

  const create = (token: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v4/projects', token, payload });

  it('creates a project in the personal namespace with a bare repository on its shard', async () => {
    const res = await create(aliceToken, { name: 'First Project', description: 'desc' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], 'application/json');
    const p = res.json();
    assert.equal(p.name, 'First Project');
    assert.equal(p.path, 'first-project');
    assert.equal(p.path_with_namespace, `${alice.username}/first-project`);
    assert.equal(p.name_with_namespace, `${alice.name} / First Project`);
    assert.deepEqual(p.namespace, {
      id: p.namespace.id, name: alice.name, path: alice.username, kind: 'user', full_path: alice.username, parent_id: null,
      avatar_url: null, web_url: `http://kiln.test/${alice.username}`,
    });
    assert.equal(p.visibility, 'private');
    assert.equal(p.default_branch, null);
    assert.equal(p.empty_repo, true);
    assert.equal(p.archived, false);
    assert.equal(p.web_url, `http://kiln.test/${alice.username}/first-project`);
    assert.equal(p.http_url_to_repo, `http://kiln.test/${alice.username}/first-project.git`);
    assert.equal(p.ssh_url_to_repo, `ssh://git@kiln.test:2222/${alice.username}/first-project.git`);
    assert.equal(p.readme_url, null);
    assert.equal('repository_storage' in p, false);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    assert.equal(row.repository_storage, 'default');
    const head = await fs.readFile(path.join(t.dataDir, 'repositories', row.disk_path, 'HEAD'), 'utf8');
    assert.equal(head, 'ref: refs/heads/main\n');
    const member = await t.db.selectFrom('members').selectAll().where('source_type', '=', 'Project').where('source_id', '=', p.id).executeTakeFirstOrThrow();
    assert.equal(member.user_id, alice.id);
    assert.equal(member.access_level, 50);
  });

  it('initializes with a README and a chosen default branch', async () => {
    const res = await create(aliceToken, { path: 'with-readme', initialize_with_readme: true, default_branch: 'trunk' });
    assert.equal(res.statusCode, 201, res.body);
    const p = res.json();
    assert.equal(p.name, 'with-readme');
    assert.equal(p.default_branch, 'trunk');
    assert.equal(p.empty_repo, false);
    assert.equal(p.readme_url, `http://kiln.test/${alice.username}/with-readme/-/blob/trunk/README.md`);
  });

  it('refuses bad input with the Service texts', async () => {
    assert.deepEqual((await create(aliceToken, {})).json(), { error: 'name, path are missing, at least one parameter must be provided' });
    assert.deepEqual((await create(aliceToken, { name: 'x', visibility: 'secret' })).json(), { error: 'visibility does not have a valid value' });
    const taken = await create(aliceToken, { name: 'FIRST PROJECT', path: 'First-Project' });
    assert.equal(taken.statusCode, 400);
    assert.deepEqual(taken.json(), { message: { name: ['has already been taken'], path: ['has already been taken'] } });
    const badPath = await create(aliceToken, { name: 'ok', path: '-bad.git' });
    assert.equal(badPath.statusCode, 400);
    assert.deepEqual(badPath.json().message.path, ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"]);
    const reserved = await create(aliceToken, { name: 'tree' });
    assert.deepEqual(reserved.json(), { message: { path: ['tree is a reserved name'] } });
    const bobNamespace = await t.db.selectFrom('namespaces').select('id').where('owner_id', '=', bob.id).executeTakeFirstOrThrow();
    const foreign = await create(aliceToken, { name: 'intruder', namespace_id: bobNamespace.id });
    assert.deepEqual(foreign.json(), { message: { namespace: ['is not valid'] } });
    assert.deepEqual((await create(aliceToken, { name: 'nowhere', namespace_id: 999999 })).json(), { message: { namespace: ['is not valid'] } });
    assert.equal((await t.request({ method: 'POST', url: '/api/v4/projects', payload: { name: 'anon' } })).statusCode, 401);
  });

  it('creates a project for a user as an administrator', async () => {
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/user/${bob.id}`, token: aliceToken, payload: { name: 'x' } })).statusCode, 403);
    assert.deepEqual((await t.request({ method: 'POST', url: '/api/v4/projects/user/999999', token: ROOT_TOKEN, payload: { name: 'x' } })).json(), { message: '404 User Not Found' });
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/user/${bob.id}`, token: ROOT_TOKEN, payload: { name: 'Given' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().path_with_namespace, `${bob.username}/given`);
    assert.equal(res.json().creator_id, bob.id);
    assert.equal(res.json().repository_storage, 'default');
  });

  it('shows a project by id or URL-encoded full path; public ones without authentication', async () => {
    const priv = (await create(aliceToken, { name: 'Hidden' })).json();
    const pub = (await create(aliceToken, { name: 'Shown', visibility: 'public' })).json();
    const byPath = await t.request({ url: `/api/v4/projects/${encodeURIComponent(pub.path_with_namespace)}` });
    assert.equal(byPath.statusCode, 200);
    assert.equal(byPath.json().id, pub.id);
    assert.equal((await t.request({ url: `/api/v4/projects/${pub.id}` })).statusCode, 200);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${priv.id}` })).json(), { message: '404 Project Not Found' });
    assert.equal((await t.request({ url: `/api/v4/projects/${priv.id}`, token: bobToken })).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/projects/${priv.id}`, token: aliceToken })).statusCode, 200);
    const admin = await t.request({ url: `/api/v4/projects/${encodeURIComponent(priv.path_with_namespace.toUpperCase())}`, token: ROOT_TOKEN });
    assert.equal(admin.statusCode, 200);
    assert.equal(admin.json().repository_storage, 'default');
    assert.deepEqual((await t.request({ url: '/api/v4/projects/nobody%2Fnothing', token: ROOT_TOKEN })).json(), { message: '404 Project Not Found' });
  });

  it('updates a project and refuses a default branch the repository lacks', async () => {
    const p = (await create(aliceToken, { name: 'Editable', initialize_with_readme: true })).json();
    const res = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.id}`, token: aliceToken, payload: { name: 'Edited', description: 'new', visibility: 'internal' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().name, 'Edited');
    assert.equal(res.json().description, 'new');
    assert.equal(res.json().visibility, 'internal');
    assert.equal(res.json().path, 'editable');
    const branch = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.id}`, token: aliceToken, payload: { default_branch: 'nope' } });
    assert.equal(branch.statusCode, 400);
    assert.deepEqual(branch.json(), { message: '400 Bad request - Could not set the default branch' });
    const none = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.id}`, token: aliceToken, payload: {} });
    assert.equal(none.statusCode, 400);
    assert.match(none.json().error, /at least one parameter must be provided/);
    // Internal now: bob reads it but may not change it.
    assert.equal((await t.request({ url: `/api/v4/projects/${p.id}`, token: bobToken })).statusCode, 200);
    assert.deepEqual((await t.request({ method: 'PUT', url: `/api/v4/projects/${p.id}`, token: bobToken, payload: { name: 'x' } })).json(), { message: '403 Forbidden' });
  });

  it('archives and unarchives', async () => {
    const p = (await create(aliceToken, { name: 'Old' })).json();
    const archived = await t.request({ method: 'POST', url: `/api/v4/projects/${p.id}/archive`, token: aliceToken });
    assert.equal(archived.statusCode, 201);
    assert.equal(archived.json().archived, true);
    const unarchived = await t.request({ method: 'POST', url: `/api/v4/projects/${p.id}/unarchive`, token: aliceToken });
    assert.equal(unarchived.statusCode, 201);
    assert.equal(unarchived.json().archived, false);
  });

  it('deletes a project with its repository and memberships: 202 Accepted', async () => {
    const p = (await create(aliceToken, { name: 'Doomed' })).json();
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.id}`, token: bobToken })).statusCode, 404);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p.id}`, token: aliceToken });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { message: '202 Accepted' });
    assert.equal(await t.db.selectFrom('projects').select('id').where('id', '=', p.id).executeTakeFirst(), undefined);
    assert.equal(await t.db.selectFrom('members').select('id').where('source_type', '=', 'Project').where('source_id', '=', p.id).executeTakeFirst(), undefined);
    await assert.rejects(fs.stat(path.join(t.dataDir, 'repositories', row.disk_path)));
    assert.equal((await t.request({ url: `/api/v4/projects/${p.id}`, token: aliceToken })).statusCode, 404);
  });
});
