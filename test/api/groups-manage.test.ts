/**
 * Groups managed through the API and the namespaces resource at the HTTP boundary (issue 20,
 * items 1 and 2): update, asynchronous deletion, sub-groups, descendants, a group's projects,
 * and namespaces with their `exists` check. Private groups stay invisible to outsiders.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { removeRepositories } from '../../src/domain/groups/delete-group.ts';

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const exists = (p: string) => fs.stat(p).then(() => true, () => false);

describe('groups: update, delete, hierarchy; namespaces', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let outsider: UserRow;
  let outsiderToken: string;
  let maintainerToken: string;
  let top: { id: number };
  let sub: { id: number };
  let deep: { id: number };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { username: 'owner1' });
    ownerToken = await createToken(t.db, owner);
    outsider = await createUser(t.db, { username: 'outsider1' });
    outsiderToken = await createToken(t.db, outsider);
    const maintainer = await createUser(t.db, { username: 'maint1' });
    maintainerToken = await createToken(t.db, maintainer);
    const post = async (payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    top = await post({ name: 'Top', path: 'top', visibility: 'public' });
    sub = await post({ name: 'Sub', path: 'sub', parent_id: top.id, visibility: 'public' });
    deep = await post({ name: 'Deep', path: 'deep', parent_id: sub.id, visibility: 'private' });
    await post({ name: 'Sub Two', path: 'sub-two', parent_id: top.id, visibility: 'internal' });
    const m = await t.request({ method: 'POST', url: `/api/v4/groups/${top.id}/members`, token: ownerToken, payload: { user_id: maintainer.id, access_level: 40 } });
    assert.equal(m.statusCode, 201, m.body);
  });
  after(async () => { await t.close(); });

  it('PUT /groups/:id changes name, path, description and visibility for the owner only', async () => {
    const forbidden = await t.request({ method: 'PUT', url: `/api/v4/groups/${top.id}`, token: maintainerToken, payload: { description: 'x' } });
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(forbidden.json(), { message: '403 Forbidden' });

    const res = await t.request({ method: 'PUT', url: '/api/v4/groups/top', token: ownerToken, payload: { name: 'Top Level', description: 'The top', path: 'top-level' } });
    assert.equal(res.statusCode, 200, res.body);
    const g = res.json();
    assert.equal(g.name, 'Top Level');
    assert.equal(g.path, 'top-level');
    assert.equal(g.full_path, 'top-level');
    assert.equal(g.description, 'The top');
    assert.deepEqual(g.projects, []);
    // The renamed group's wiki keeps its disk path; a new group of the old path gets its own.
    const again = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Old Top', path: 'top' } });
    assert.equal(again.statusCode, 201, again.body);
    const wikis = await t.db.selectFrom('namespaces').select(['id', 'wiki_disk_path']).where('id', 'in', [top.id, again.json().id]).orderBy('id').execute();
    assert.equal(wikis[0].wiki_disk_path, 'top.wiki.git');
    assert.match(wikis[1].wiki_disk_path!, /^top-[0-9a-f]{8}\.wiki\.git$/);
    const child = await t.request({ method: 'GET', url: '/api/v4/groups/top-level%2Fsub', token: ownerToken });
    assert.equal(child.json().full_name, 'Top Level / Sub');
    const row = await t.db.selectFrom('namespaces').selectAll().where('id', '=', top.id).executeTakeFirstOrThrow();
    assert.equal(row.description, 'The top');
  });

  it('PUT validates: visibility against parent and children, path format and uniqueness, lengths', async () => {
    const put = (id: number, payload: Record<string, unknown>) => t.request({ method: 'PUT', url: `/api/v4/groups/${id}`, token: ownerToken, payload });
    assert.deepEqual((await put(top.id, { visibility: 'private' })).json(), {
      message: { visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'] },
    });
    const deepPublic = await put(deep.id, { visibility: 'public' });
    assert.equal(deepPublic.statusCode, 200, 'public under a public parent is allowed');
    await put(deep.id, { visibility: 'private' });
    const subPrivate = await put(sub.id, { visibility: 'private' });
    assert.equal(subPrivate.statusCode, 200, subPrivate.body);
    assert.deepEqual((await put(deep.id, { visibility: 'internal' })).json(), {
      message: { visibility_level: ['internal is not allowed since the parent group has a private visibility.'] },
    });
    await put(sub.id, { visibility: 'public' });

    assert.deepEqual((await put(sub.id, { path: 'sub-two' })).json(), { message: { path: ['has already been taken'] } });
    assert.deepEqual((await put(top.id, { path: owner.username })).json(), { message: { path: ['has already been taken'] } });
    assert.deepEqual((await put(sub.id, { path: 'bad path' })).json().message.path.length, 1);
    assert.deepEqual((await put(top.id, { path: 'admin' })).json(), { message: { path: ['admin is a reserved name'] } });
    assert.deepEqual((await put(top.id, { description: 'd'.repeat(256) })).json(), { message: { description: ['is too long (maximum is 255 characters)'] } });
    assert.deepEqual((await put(top.id, { name: 'n'.repeat(1_000_000) })).json(), { message: { name: ['is too long (maximum is 255 characters)'] } });
    assert.equal((await put(top.id, { visibility: 'secret' })).statusCode, 400);
    assert.deepEqual((await put(top.id, { description: 'a\u0000b' })).json(), { message: { description: ['is invalid'] } });
    assert.equal((await put(top.id, { name: 'a\u0000b' })).statusCode, 400);
    assert.equal((await t.request({ method: 'PUT', url: '/api/v4/groups/2147483648', token: ownerToken, payload: { name: 'x' } })).statusCode, 404);
  });

  it('subgroups and descendant_groups list what the caller may see', async () => {
    const names = (res: { json(): unknown }) => (res.json() as { full_path: string }[]).map((g) => g.full_path).sort();
    const anon = await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/subgroups` });
    assert.equal(anon.statusCode, 200);
    assert.deepEqual(names(anon), ['top-level/sub']);
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/subgroups`, token: outsiderToken })), ['top-level/sub', 'top-level/sub-two']);
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/descendant_groups`, token: outsiderToken })), ['top-level/sub', 'top-level/sub-two']);
    const mine = await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/descendant_groups?per_page=2`, token: ownerToken });
    assert.deepEqual(names(mine), ['top-level/sub', 'top-level/sub/deep']);
    assert.equal(mine.headers['x-total'], '3');
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/descendant_groups?search=DEE`, token: ownerToken })), ['top-level/sub/deep']);
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/descendant_groups?skip_groups[]=${deep.id}&order_by=id&sort=desc`, token: ownerToken })), ['top-level/sub', 'top-level/sub-two']);
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/subgroups?all_available=false`, token: outsiderToken })), []);
    assert.deepEqual(names(await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/subgroups?skip_groups[]=99999999999`, token: ownerToken })), ['top-level/sub', 'top-level/sub-two']);
    const nul = await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/descendant_groups?search=a%00b`, token: ownerToken });
    assert.deepEqual([nul.statusCode, nul.json()], [400, { error: 'search is invalid' }]);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/groups/top-level%00x/subgroups', token: ownerToken })).statusCode, 404);
    // A private group answers 404 to outsiders, as if it did not exist.
    const hidden = await t.request({ method: 'GET', url: `/api/v4/groups/${deep.id}/subgroups`, token: outsiderToken });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Group Not Found' });
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/groups/${deep.id}`, token: outsiderToken })).statusCode, 404);
  });

  it("GET /groups/:id/projects lists the group's projects with the Service's filters", async () => {
    const mk = async (payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    await mk({ name: 'alpha', namespace_id: top.id, visibility: 'public' });
    await mk({ name: 'beta', namespace_id: top.id, visibility: 'private' });
    await mk({ name: 'gamma', namespace_id: deep.id, visibility: 'private' });
    const list = async (q: string, token?: string) => {
      const res = await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/projects${q}`, token });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { path_with_namespace: string }[]).map((p) => p.path_with_namespace);
    };
    assert.deepEqual(await list('?order_by=name&sort=asc', ownerToken), ['top-level/alpha', 'top-level/beta']);
    assert.deepEqual(await list('?order_by=name&sort=asc'), ['top-level/alpha']);
    assert.deepEqual(await list('?order_by=name&sort=asc&include_subgroups=true', ownerToken), ['top-level/alpha', 'top-level/beta', 'top-level/sub/deep/gamma']);
    assert.deepEqual(await list('?include_subgroups=true', outsiderToken), ['top-level/alpha']);
    assert.deepEqual(await list('?visibility=private', ownerToken), ['top-level/beta']);
    assert.deepEqual(await list('?search=ALP', ownerToken), ['top-level/alpha']);
    assert.deepEqual(await list('?archived=true', ownerToken), []);
    const simple = (await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/projects?simple=true&order_by=name&sort=asc`, token: ownerToken })).json();
    assert.equal(simple[0].path_with_namespace, 'top-level/alpha');
    assert.equal(simple[0].visibility, undefined, 'BasicProject has no visibility');
    assert.ok('namespace' in simple[0] && 'http_url_to_repo' in simple[0]);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/projects?order_by=stars` })).statusCode, 400);
    const nul = await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}/projects?search=a%00b`, token: ownerToken });
    assert.deepEqual([nul.statusCode, nul.json()], [400, { error: 'search is invalid' }]);
  });

  it('GET /namespaces lists the personal namespace and member groups; search, owned_only', async () => {
    const list = async (q: string, token: string) => {
      const res = await t.request({ method: 'GET', url: `/api/v4/namespaces${q}`, token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { full_path: string; kind: string; members_count_with_descendants?: number }[];
    };
    // A member of a sub-group counts for every group above it, once.
    const subTwo = (await t.request({ method: 'GET', url: '/api/v4/groups/top-level%2Fsub-two', token: ownerToken })).json();
    const extra = await createUser(t.db, { username: 'extra1' });
    for (const g of [subTwo.id, sub.id]) {
      assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${g}/members`, token: ownerToken, payload: { user_id: extra.id, access_level: 10 } })).statusCode, 201);
    }
    const mine = await list('', ownerToken);
    assert.deepEqual(mine.map((n) => n.full_path), ['owner1', 'top-level', 'top-level/sub', 'top-level/sub/deep', 'top-level/sub-two']);
    assert.equal(mine[0].kind, 'user');
    assert.deepEqual(mine.map((n) => n.members_count_with_descendants), [undefined, 3, 2, 1, 2]);
    assert.deepEqual(Object.keys(mine[1]).sort(), ['avatar_url', 'full_path', 'id', 'kind', 'members_count_with_descendants', 'name', 'parent_id', 'path', 'web_url']);
    assert.equal(mine[1].kind, 'group');
    const maint = await list('', maintainerToken);
    assert.deepEqual(maint.map((n) => n.full_path), ['maint1', 'top-level']);
    assert.equal(maint[1].members_count_with_descendants, undefined);
    assert.deepEqual((await list('?owned_only=true', maintainerToken)).map((n) => n.full_path), ['maint1']);
    assert.deepEqual((await list('?search=sub', ownerToken)).map((n) => n.full_path), ['top-level/sub', 'top-level/sub-two']);
    assert.deepEqual((await list('?top_level_only=true', ownerToken)).map((n) => n.full_path), ['owner1', 'top-level']);
    const all = await list('?per_page=100', ROOT_TOKEN);
    assert.ok(all.some((n) => n.full_path === 'outsider1') && all.some((n) => n.full_path === 'top-level/sub/deep'));
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/namespaces' })).statusCode, 401);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/namespaces?search=a%00b', token: ownerToken })).statusCode, 400);
  });

  it('GET /namespaces/:id by id or path; 404 for what the caller may not read', async () => {
    const byPath = await t.request({ method: 'GET', url: '/api/v4/namespaces/top-level%2Fsub', token: ownerToken });
    assert.equal(byPath.statusCode, 200, byPath.body);
    assert.deepEqual(byPath.json(), {
      id: sub.id, name: 'Sub', path: 'sub', kind: 'group', full_path: 'top-level/sub', parent_id: top.id, avatar_url: null,
      web_url: 'http://kiln.test/groups/top-level/sub', members_count_with_descendants: 2,
    });
    const personal = await t.request({ method: 'GET', url: '/api/v4/namespaces/owner1', token: ownerToken });
    assert.equal(personal.json().web_url, 'http://kiln.test/owner1');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/namespaces/${sub.id}`, token: maintainerToken })).statusCode, 200);
    for (const id of ['owner1', String(top.id), 'top-level%2Fsub%2Fdeep', '2147483648', '99999999999999999999', 'a%00b']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/namespaces/${id}`, token: outsiderToken });
      assert.equal(res.statusCode, 404, id);
      assert.deepEqual(res.json(), { message: '404 Namespace Not Found' });
    }
  });

  it('GET /namespaces/:id/exists answers with a suggestion', async () => {
    const ask = async (q: string) => {
      const res = await t.request({ method: 'GET', url: `/api/v4/namespaces/${q}`, token: outsiderToken });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    assert.deepEqual(await ask('TOP-LEVEL/exists'), { exists: true, suggests: ['TOP-LEVEL1'] });
    assert.deepEqual(await ask('owner1/exists'), { exists: true, suggests: ['owner11'] });
    assert.deepEqual(await ask('free-path/exists'), { exists: false, suggests: [] });
    assert.deepEqual(await ask('sub/exists'), { exists: false, suggests: [] });
    assert.deepEqual(await ask(`sub/exists?parent_id=${top.id}`), { exists: true, suggests: ['sub1'] });
    assert.deepEqual(await ask('sub/exists?parent_id=2147483648'), { exists: false, suggests: [] });
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/namespaces/sub/exists?parent_id=abc', token: outsiderToken })).statusCode, 400);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/namespaces/a%00b/exists', token: outsiderToken })).statusCode, 400);
    assert.deepEqual(await ask(`${'x'.repeat(300)}/exists`), { exists: false, suggests: [] });
  });

  it('DELETE /groups/:id answers 202 and removes the tree; repositories go in the background', async () => {
    const project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'doomed', namespace_id: sub.id, initialize_with_readme: true } })).json();
    const repo = path.join(t.dataDir, 'repositories', 'top-level', 'sub', 'doomed.git');
    const projectRow = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
    const repoPath = path.join(t.dataDir, 'repositories', projectRow.disk_path);
    assert.ok(await exists(repoPath), repo);
    const wiki = path.join(t.dataDir, 'repositories', 'top', 'sub.wiki.git');
    assert.ok(await exists(wiki));

    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/groups/${sub.id}`, token: maintainerToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/groups/${deep.id}`, token: outsiderToken })).statusCode, 404);
    const stale = await t.request({ method: 'DELETE', url: `/api/v4/groups/${sub.id}`, token: ownerToken, headers: { 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    assert.equal(stale.statusCode, 412);

    await t.db.updateTable('projects').set({ read_only: 1 }).where('id', '=', project.id).execute();
    const moving = await t.request({ method: 'DELETE', url: `/api/v4/groups/${sub.id}`, token: ownerToken });
    assert.equal(moving.statusCode, 409);
    assert.deepEqual(moving.json(), { message: 'The repository is temporarily read-only. Please try again later.' });
    await t.db.updateTable('projects').set({ read_only: 0 }).where('id', '=', project.id).execute();

    const res = await t.request({ method: 'DELETE', url: `/api/v4/groups/${sub.id}`, token: ownerToken });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { message: '202 Accepted' });
    const left = await t.db.selectFrom('namespaces').select('id').where('id', 'in', [sub.id, deep.id]).execute();
    assert.deepEqual(left, []);
    assert.equal(await t.db.selectFrom('projects').select('id').where('id', '=', project.id).executeTakeFirst(), undefined);
    assert.equal((await t.db.selectFrom('members').select('id').where('source_type', '=', 'Namespace').where('source_id', 'in', [sub.id, deep.id]).execute()).length, 0);
    await eventually(async () => !(await exists(repoPath)) && !(await exists(wiki)), 'the repositories to be removed');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/groups/${sub.id}`, token: ownerToken })).statusCode, 404);

    // The job leaves a repository alone when a row took its disk path in the meantime.
    const keeper = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'keeper', namespace_id: top.id } })).json();
    const keeperRow = await t.db.selectFrom('projects').selectAll().where('id', '=', keeper.id).executeTakeFirstOrThrow();
    await removeRepositories(t.db, t.config.storages, { repositories: [{ storage: keeperRow.repository_storage, diskPath: keeperRow.disk_path }] }, new AbortController().signal);
    assert.ok(await exists(path.join(t.dataDir, 'repositories', keeperRow.disk_path)));
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/groups/${top.id}`, token: ownerToken })).statusCode, 200);
  });
});
