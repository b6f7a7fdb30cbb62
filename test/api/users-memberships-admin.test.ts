/**
 * What administrators read of users' memberships (reference §1.3, §1.4): GET /users
 * `without_projects=true` (users with no project membership) and `highest_role` on
 * GET /users/:id (UserDetailsWithAdmin), now that projects, groups and members exist.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('users\' memberships as administrators see them', () => {
  let t: TestApp;
  let owner: UserRow;
  let projectMember: UserRow;
  let groupOnly: UserRow;
  let loner: UserRow;
  let orphaned: UserRow;
  let ownerToken: string;

  const post = async (token: string, url: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { username: 'has-projects' });
    projectMember = await createUser(t.db, { username: 'project-member' });
    groupOnly = await createUser(t.db, { username: 'group-only' });
    loner = await createUser(t.db, { username: 'loner' });
    orphaned = await createUser(t.db, { username: 'orphaned' });
    ownerToken = await createToken(t.db, owner);
    const project = await post(ownerToken, '/projects', { name: 'Owned' });
    await post(ownerToken, `/projects/${project.id}/members`, { user_id: projectMember.id, access_level: 20 });
    const group = await post(ownerToken, '/groups', { name: 'Team', path: 'team-x' });
    await post(ownerToken, `/groups/${group.id}/members`, { user_id: groupOnly.id, access_level: 40 });
    // A membership of a project that went with its owner is no membership.
    const leaving = await createUser(t.db, { username: 'leaving' });
    const leavingProject = await post(await createToken(t.db, leaving), '/projects', { name: 'Gone' });
    await t.db.insertInto('members').values({
      source_type: 'Project', source_id: leavingProject.id, user_id: orphaned.id, access_level: 30,
      expires_at: null, created_by_id: null, created_at: leaving.created_at, updated_at: leaving.created_at,
    }).execute();
    await t.db.deleteFrom('users').where('id', '=', leaving.id).execute();
  });
  after(async () => { await t.close(); });

  const usernames = async (url: string, token = ROOT_TOKEN) => {
    const res = await t.request({ url, token });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { username: string }[]).map((u) => u.username);
  };

  it('without_projects=true lists the users with no project membership', async () => {
    const listed = await usernames('/api/v4/users?without_projects=true&per_page=100');
    for (const name of ['group-only', 'loner', 'orphaned']) assert.ok(listed.includes(name), name);
    for (const name of ['has-projects', 'project-member']) assert.equal(listed.includes(name), false, name);
    assert.ok((await usernames('/api/v4/users?without_projects=false&per_page=100')).includes('has-projects'));
  });

  it('drops without_projects for users who are not administrators', async () => {
    const listed = await usernames('/api/v4/users?without_projects=true&per_page=100', ownerToken);
    assert.ok(listed.includes('has-projects'));
    assert.ok(listed.includes('project-member'));
  });

  it('answers highest_role: the highest level over project and group memberships, 0 without any', async () => {
    const role = async (user: UserRow) => {
      const res = await t.request({ url: `/api/v4/users/${user.id}`, token: ROOT_TOKEN });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().highest_role;
    };
    assert.equal(await role(owner), 50);
    assert.equal(await role(projectMember), 20);
    assert.equal(await role(groupOnly), 40);
    assert.equal(await role(loner), 0);
    assert.equal(await role(orphaned), 0);
    // Only the administrator's view carries it.
    const plain = await t.request({ url: `/api/v4/users/${owner.id}`, token: await createToken(t.db, loner) });
    assert.equal('highest_role' in plain.json(), false);
    const admin = await createAdmin(t.db);
    assert.equal((await t.request({ url: `/api/v4/users/${groupOnly.id}`, token: await createToken(t.db, admin) })).json().highest_role, 40);
  });
});
