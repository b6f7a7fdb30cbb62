/**
 * The project entities as the Service 15.2 answers them (issue 35, items 4 and 12): who gets
 * ProjectWithAccess and its permissions, the owner of a personal project, what only readers of
 * the code and administrators of the project see, and runners_token on project and group entities.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

type Json = Record<string, any>;

describe('project entity', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  const tokens: Record<'guest' | 'developer' | 'maintainer' | 'groupDeveloper' | 'groupOwner', string> = {} as never;
  const users: Record<string, UserRow> = {};
  let personal: Json;
  let groupId: number;
  let inGroup: Json;

  const api = (method: 'GET' | 'POST' | 'PUT', url: string, token?: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });
  const registerRunner = (token: string) => t.request({ method: 'POST', url: '/api/v4/runners', payload: { token, description: 'r' } });
  const get = async (url: string, token?: string) => {
    const res = await api('GET', url, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    const names = ['guest', 'developer', 'maintainer', 'groupDeveloper', 'groupOwner'] as const;
    for (const name of names) {
      users[name] = await createUser(t.db);
      tokens[name] = await createToken(t.db, users[name]);
    }
    personal = (await api('POST', '/projects', ownerToken, { name: 'Personal', initialize_with_readme: true })).json();
    for (const [name, level] of [['guest', 10], ['developer', 30], ['maintainer', 40]] as const) {
      const res = await api('POST', `/projects/${personal.id}/members`, ownerToken, { user_id: users[name].id, access_level: level });
      assert.equal(res.statusCode, 201, res.body);
    }
    const group = await api('POST', '/groups', ROOT_TOKEN, { name: 'Crew', path: 'crew', visibility: 'private' });
    assert.equal(group.statusCode, 201, group.body);
    groupId = group.json().id;
    for (const [name, level] of [['groupDeveloper', 30], ['groupOwner', 50]] as const) {
      const res = await api('POST', `/groups/${groupId}/members`, ROOT_TOKEN, { user_id: users[name].id, access_level: level });
      assert.equal(res.statusCode, 201, res.body);
    }
    const sub = await api('POST', '/groups', ROOT_TOKEN, { name: 'Deck', path: 'deck', parent_id: groupId });
    assert.equal(sub.statusCode, 201, sub.body);
    inGroup = (await api('POST', '/projects', tokens.groupOwner, { name: 'Shared', namespace_id: sub.json().id })).json();
    assert.ok(inGroup.id, JSON.stringify(inGroup));
    // The group developer is also a direct Maintainer of the project.
    await api('POST', `/projects/${inGroup.id}/members`, tokens.groupOwner, { user_id: users.groupDeveloper.id, access_level: 40 });
  });
  after(async () => { await t.close(); });

  it('gives a signed-in reader permissions: the direct membership, and the highest of the groups above', async () => {
    const own = await get(`/projects/${personal.id}`, ownerToken);
    assert.deepEqual(own.permissions, { project_access: { access_level: 50, notification_level: 3 }, group_access: null });
    const guest = await get(`/projects/${personal.id}`, tokens.guest);
    assert.deepEqual(guest.permissions, { project_access: { access_level: 10, notification_level: 3 }, group_access: null });
    const both = await get(`/projects/${inGroup.id}`, tokens.groupDeveloper);
    assert.deepEqual(both.permissions, {
      project_access: { access_level: 40, notification_level: 3 }, group_access: { access_level: 30, notification_level: 3 },
    });
    const inherited = await get(`/projects/${inGroup.id}`, tokens.groupOwner);
    // The creator is a member of the project too (Owner), and Owner of the parent group.
    assert.deepEqual(inherited.permissions.group_access, { access_level: 50, notification_level: 3 });
    const admin = await get(`/projects/${personal.id}`, ROOT_TOKEN);
    assert.deepEqual(admin.permissions, { project_access: null, group_access: null });
    // The list carries the same, row by row.
    const list = await get('/projects?membership=true&order_by=id&sort=asc', tokens.groupDeveloper);
    assert.deepEqual(list.map((p: Json) => [p.id, p.permissions]), [[inGroup.id, both.permissions]]);
  });

  it('names the owner of a personal project (UserBasic), none for a group project', async () => {
    const p = await get(`/projects/${personal.id}`, tokens.guest);
    assert.deepEqual(p.owner, {
      id: owner.id, username: owner.username, name: owner.name, state: 'active', avatar_url: null,
      web_url: `http://kiln.test/${owner.username}`,
    });
    assert.equal('owner' in (await get(`/projects/${inGroup.id}`, tokens.groupOwner)), false);
    const listed = (await get('/projects?owned=true', ownerToken)).find((x: Json) => x.id === personal.id);
    assert.equal(listed.owner.id, owner.id);
  });

  it('answers BasicProjectDetails to anonymous readers and for simple=true', async () => {
    const pub = (await api('POST', '/projects', ownerToken, { name: 'Open', visibility: 'public' })).json();
    const anon = await get(`/projects/${pub.id}`);
    assert.deepEqual(Object.keys(anon).sort(), [
      'avatar_url', 'created_at', 'default_branch', 'description', 'forks_count', 'http_url_to_repo', 'id', 'last_activity_at', 'name',
      'name_with_namespace', 'namespace', 'path', 'path_with_namespace', 'readme_url', 'ssh_url_to_repo', 'star_count', 'tag_list',
      'topics', 'web_url',
    ]);
    const anonList = await get('/projects');
    assert.ok(anonList.length > 0 && anonList.every((p: Json) => !('permissions' in p) && !('visibility' in p)));
    const simple = await get('/projects?simple=true', ownerToken);
    assert.ok(simple.length > 0 && simple.every((p: Json) => !('permissions' in p) && !('_links' in p)));
  });

  it('keeps default_branch and ci_config_path from guests of a private project', async () => {
    const guest = await get(`/projects/${personal.id}`, tokens.guest);
    assert.equal('default_branch' in guest, false);
    assert.equal('ci_config_path' in guest, false);
    const developer = await get(`/projects/${personal.id}`, tokens.developer);
    assert.equal(developer.default_branch, 'main');
    assert.equal(developer.ci_config_path, null);
  });

  it('shows runners_token to Maintainers and up and to administrators, on show, create and update; it registers runners', async () => {
    for (const who of ['guest', 'developer'] as const) {
      const p = await get(`/projects/${personal.id}`, tokens[who]);
      assert.equal('runners_token' in p, false, who);
      assert.equal('import_error' in p, false, who);
      assert.equal('build_git_strategy' in p, false, who);
    }
    const maintainer = await get(`/projects/${personal.id}`, tokens.maintainer);
    assert.match(maintainer.runners_token, /^GR1348941[\w-]{20,}$/);
    assert.deepEqual([maintainer.import_error, maintainer.build_git_strategy], [null, 'fetch']);
    assert.equal((await get(`/projects/${personal.id}`, ROOT_TOKEN)).runners_token, maintainer.runners_token);
    assert.equal((await get(`/projects/${personal.id}`, ownerToken)).runners_token, maintainer.runners_token);
    // Not in lists, nor on archive (the Service passes user_can_admin_project to neither).
    assert.ok((await get('/projects', ownerToken)).every((p: Json) => !('runners_token' in p)));
    const updated = await api('PUT', `/projects/${personal.id}`, tokens.maintainer, { description: 'edited' });
    assert.equal(updated.json().runners_token, maintainer.runners_token);
    const created = (await api('POST', '/projects', ownerToken, { name: 'Fresh' })).json();
    assert.match(created.runners_token, /^GR1348941/);
    assert.notEqual(created.runners_token, maintainer.runners_token);
    // Sealed, not stored in the clear; the digest is what registration finds.
    const row = await t.db.selectFrom('ci_runner_registration_tokens').selectAll()
      .where('source_type', '=', 'Project').where('source_id', '=', personal.id).executeTakeFirstOrThrow();
    assert.ok(row.encrypted_token && !row.encrypted_token.includes(maintainer.runners_token));
    const registered = await registerRunner(maintainer.runners_token);
    assert.equal(registered.statusCode, 201, registered.body);
    // A reset shows its token once more, and the entity shows the new one from then on.
    const reset = await api('POST', `/projects/${personal.id}/runners/reset_registration_token`, tokens.maintainer);
    assert.equal(reset.statusCode, 201, reset.body);
    assert.equal((await get(`/projects/${personal.id}`, tokens.maintainer)).runners_token, reset.json().token);
  });

  it('shows null for a token kept only as a digest (made before tokens were sealed) until a reset', async () => {
    const legacy = (await api('POST', '/projects', ownerToken, { name: 'Legacy' })).json();
    const token = legacy.runners_token as string;
    await t.db.updateTable('ci_runner_registration_tokens').set({ encrypted_token: null })
      .where('source_type', '=', 'Project').where('source_id', '=', legacy.id).execute();
    assert.equal((await get(`/projects/${legacy.id}`, ownerToken)).runners_token, null);
    // It still registers runners.
    const registered = await registerRunner(token);
    assert.equal(registered.statusCode, 201, registered.body);
    const reset = (await api('POST', `/projects/${legacy.id}/runners/reset_registration_token`, ownerToken)).json();
    assert.equal((await get(`/projects/${legacy.id}`, ownerToken)).runners_token, reset.token);
  });

  it('shows a group\'s runners_token to its Owners and administrators only (GroupDetail)', async () => {
    const groupOwner = await get(`/groups/${groupId}`, tokens.groupOwner);
    assert.match(groupOwner.runners_token, /^GR1348941/);
    assert.deepEqual([groupOwner.shared_with_groups, groupOwner.prevent_sharing_groups_outside_hierarchy], [[], false]);
    assert.equal((await get(`/groups/${groupId}`, ROOT_TOKEN)).runners_token, groupOwner.runners_token);
    assert.equal('runners_token' in (await get(`/groups/${groupId}`, tokens.groupDeveloper)), false);
    const updated = await api('PUT', `/groups/${groupId}`, tokens.groupOwner, { description: 'the crew' });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().runners_token, groupOwner.runners_token);
    const registered = await registerRunner(groupOwner.runners_token);
    assert.equal(registered.statusCode, 201, registered.body);
    assert.equal(registered.json().id > 0, true);
    const runner = await t.db.selectFrom('ci_runners').selectAll().where('id', '=', registered.json().id).executeTakeFirstOrThrow();
    assert.deepEqual([runner.runner_type, runner.group_id], ['group_type', groupId]);
  });
});
