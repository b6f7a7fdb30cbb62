/** Groups at the HTTP boundary: create (paths as the Service validates them), list, show (CONTRACT §4). */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('groups', () => {
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

  const create = (token: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v4/groups', token, payload });

  it('creates a group whose creator is its owner, with a wiki repository', async () => {
    const res = await create(aliceToken, { name: 'Platform Team', path: 'platform', description: 'infra', visibility: 'internal' });
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    assert.deepEqual({ ...g, id: 0, created_at: '' }, {
      id: 0, web_url: 'http://kiln.test/groups/platform', name: 'Platform Team', path: 'platform', description: 'infra',
      visibility: 'internal', project_creation_level: 'maintainer', subgroup_creation_level: 'maintainer', avatar_url: null,
      full_name: 'Platform Team', full_path: 'platform', created_at: '', parent_id: null,
    });
    const owner = await t.db.selectFrom('members').selectAll().where('source_type', '=', 'Namespace').where('source_id', '=', g.id).executeTakeFirstOrThrow();
    assert.equal(owner.user_id, alice.id);
    assert.equal(owner.access_level, 50);
    const head = await fs.readFile(path.join(t.dataDir, 'repositories', 'platform.wiki.git', 'HEAD'), 'utf8');
    assert.match(head, /^ref: refs\/heads\//);

    const sub = await create(aliceToken, { name: 'Tools', path: 'tools', parent_id: g.id, visibility: 'internal' });
    assert.equal(sub.statusCode, 201, sub.body);
    assert.equal(sub.json().full_path, 'platform/tools');
    assert.equal(sub.json().full_name, 'Platform Team / Tools');
    await fs.stat(path.join(t.dataDir, 'repositories', 'platform', 'tools.wiki.git', 'HEAD'));
  });

  it('validates paths: reserved names, format, and uniqueness shared with usernames', async () => {
    for (const reserved of ['admin', 'API', 'users', '-', 'help', 'explore', 'dashboard', 'oauth', 'uploads', 'assets']) {
      const res = await create(aliceToken, { name: 'Reserved', path: reserved });
      assert.equal(res.statusCode, 400, reserved);
      assert.deepEqual(res.json().message.path, [reserved === '-' ? "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'." : `${reserved} is a reserved name`], reserved);
    }
    for (const bad of ['a b', 'ends.', 'x.git', 'y.atom', '-lead']) {
      assert.deepEqual((await create(aliceToken, { name: 'Bad', path: bad })).json().message.path,
        ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."], bad);
    }
    assert.deepEqual((await create(aliceToken, { name: 'Dup', path: 'PLATFORM' })).json(), { message: { path: ['has already been taken'] } });
    assert.deepEqual((await create(aliceToken, { name: 'Mine', path: alice.username.toUpperCase() })).json(), { message: { path: ['has already been taken'] } });
    assert.deepEqual((await create(aliceToken, { name: 'x' })).json(), { message: '400 Bad request - "path" not given' });
    const parent = (await t.request({ url: '/api/v4/groups/platform', token: aliceToken })).json();
    // Sub-groups may use top-level words but not the project route words.
    assert.equal((await create(aliceToken, { name: 'Admin', path: 'admin', parent_id: parent.id })).statusCode, 201);
    assert.deepEqual((await create(aliceToken, { name: 'Tree', path: 'tree', parent_id: parent.id })).json(), { message: { path: ['tree is a reserved name'] } });
    const louder = await create(aliceToken, { name: 'Loud', path: 'loud', parent_id: parent.id, visibility: 'public' });
    assert.deepEqual(louder.json(), { message: { visibility_level: ['public is not allowed since the parent group has a internal visibility.'] } });
  });

  it('refuses sub-groups in groups the caller may not create in, and unknown parents', async () => {
    const parent = (await t.request({ url: '/api/v4/groups/platform', token: bobToken })).json();
    assert.deepEqual((await create(bobToken, { name: 'Sneaky', path: 'sneaky', parent_id: parent.id })).json(), { message: '403 Forbidden' });
    assert.deepEqual((await create(bobToken, { name: 'Orphan', path: 'orphan', parent_id: 999999 })).json(), { message: '404 Group Not Found' });
    const noGroups = await createUser(t.db, { can_create_group: 0 });
    assert.equal((await create(await createToken(t.db, noGroups), { name: 'No', path: 'no-groups-here' })).statusCode, 403);
  });

  it('lists groups per viewer and filters them', async () => {
    await create(aliceToken, { name: 'Open Source', path: 'opensource', visibility: 'public' });
    await create(aliceToken, { name: 'Secret', path: 'secret' });
    const list = async (url: string, token?: string) => ((await t.request({ url, token })).json() as { full_path: string }[]).map((g) => g.full_path);
    assert.deepEqual(await list('/api/v4/groups'), ['opensource']);
    assert.deepEqual(await list('/api/v4/groups', bobToken), []);
    // Ordered by name (default order_by=name, sort=asc); the private sub-group stays hidden.
    assert.deepEqual(await list('/api/v4/groups?all_available=true', bobToken), ['opensource', 'platform', 'platform/tools']);
    assert.deepEqual(await list('/api/v4/groups', aliceToken), ['platform/admin', 'opensource', 'platform', 'secret', 'platform/tools']);
    assert.deepEqual(await list('/api/v4/groups?top_level_only=true&order_by=path&sort=desc', aliceToken), ['secret', 'platform', 'opensource']);
    assert.deepEqual(await list('/api/v4/groups?search=SOUR', aliceToken), ['opensource']);
    assert.deepEqual(await list('/api/v4/groups?order_by=id', ROOT_TOKEN), ['platform', 'platform/tools', 'platform/admin', 'opensource', 'secret']);
    assert.deepEqual(await list('/api/v4/groups?owned=true', bobToken), []);
    const paged = await t.request({ url: '/api/v4/groups?per_page=2', token: aliceToken });
    assert.equal(paged.headers['x-total'], '5');
    assert.equal(paged.json().length, 2);
  });

  it('shows a group by id or full path with its visible projects; private groups are hidden', async () => {
    const group = (await t.request({ url: '/api/v4/groups/platform%2Ftools', token: aliceToken })).json();
    assert.equal(group.full_path, 'platform/tools');
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', token: aliceToken, payload: { name: 'Tooling', namespace_id: group.id } });
    assert.equal(project.statusCode, 201, project.body);
    assert.equal(project.json().path_with_namespace, 'platform/tools/tooling');
    assert.equal(project.json().namespace.web_url, 'http://kiln.test/groups/platform/tools');
    const detail = await t.request({ url: `/api/v4/groups/${group.id}`, token: aliceToken });
    assert.deepEqual(detail.json().projects.map((p: { name: string }) => p.name), ['Tooling']);
    assert.deepEqual(detail.json().shared_projects, []);
    assert.deepEqual((await t.request({ url: `/api/v4/groups/${group.id}`, token: bobToken })).json().projects, []);
    assert.deepEqual((await t.request({ url: '/api/v4/groups/secret', token: bobToken })).json(), { message: '404 Group Not Found' });
    assert.equal((await t.request({ url: '/api/v4/groups/secret' })).statusCode, 404);
    assert.equal((await t.request({ url: '/api/v4/groups/opensource' })).statusCode, 200);
    assert.equal((await t.request({ url: '/api/v4/groups/platform', token: ROOT_TOKEN })).json().repository_storage, 'default');
    // Group members inherit access to the group's projects, sub-groups included.
    const tooling = await t.request({ url: '/api/v4/projects/platform%2Ftools%2Ftooling', token: aliceToken });
    assert.equal(tooling.statusCode, 200);
  });
  it('pages anonymous readers by keyset in name order with an opaque cursor, and only that order', async () => {
    for (const [name, visibility] of [['ks-beta', 'public'], ['KS-Alpha', 'public'], ['ks-delta', 'public'], ['Ks-Gamma', 'public'], ['ks-epsilon', 'public'], ['ks-hidden', 'private']]) {
      assert.equal((await create(aliceToken, { name, path: name.toLowerCase(), visibility })).statusCode, 201);
    }
    const expected = ['KS-Alpha', 'ks-beta', 'ks-delta', 'ks-epsilon', 'Ks-Gamma'];
    // Offset pages use the same case-insensitive order on both engines.
    const offset = await t.request({ url: '/api/v4/groups?search=ks-' });
    assert.deepEqual(offset.json().map((g: { name: string }) => g.name), expected);

    const seen: string[] = [];
    let url: string | null = '/api/v4/groups?search=ks-&pagination=keyset&per_page=2';
    let pages = 0;
    while (url) {
      const res = await t.request({ url });
      assert.equal(res.statusCode, 200, res.body);
      seen.push(...res.json().map((g: { name: string }) => g.name));
      for (const h of ['x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages']) assert.equal(res.headers[h], undefined, h);
      pages += 1;
      const linkHeader = res.headers.link as string | undefined;
      if (!linkHeader) break;
      const m = /^<http:\/\/kiln\.test(\/api\/v4\/groups\?[^>]+)>; rel="next"$/.exec(linkHeader);
      assert.ok(m, linkHeader);
      const next = new URL(`http://kiln.test${m[1]}`);
      assert.equal(next.searchParams.get('pagination'), 'keyset');
      assert.equal(next.searchParams.get('search'), 'ks-');
      assert.equal(next.searchParams.has('page'), false);
      const cursor = JSON.parse(Buffer.from(next.searchParams.get('cursor')!, 'base64url').toString());
      assert.deepEqual(Object.keys(cursor), ['name', 'id']);
      assert.equal(cursor.name, seen[seen.length - 1]);
      url = m[1];
    }
    assert.deepEqual(seen, expected);
    assert.equal(pages, 3);

    for (const query of ['order_by=id', 'order_by=path', 'sort=desc', 'order_by=name&sort=desc']) {
      const res = await t.request({ url: `/api/v4/groups?pagination=keyset&${query}` });
      assert.equal(res.statusCode, 405, query);
      assert.deepEqual(res.json(), { error: 'Keyset pagination is not yet available for this type of request' });
    }
    const bad = await t.request({ url: '/api/v4/groups?pagination=keyset&cursor=not-a-cursor' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'cursor is invalid' });
    // Signed-in callers get offset pages whatever they ask for.
    const signedIn = await t.request({ url: '/api/v4/groups?search=ks-&pagination=keyset&order_by=id&per_page=2', token: aliceToken });
    assert.equal(signedIn.statusCode, 200);
    assert.equal(signedIn.headers['x-page'], '1');
    assert.equal(signedIn.headers['x-total'], '6');
  });
});
