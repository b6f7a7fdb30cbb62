/**
 * Stars (issue 32, item 3; lib/api/projects.rb of the Service 15.2): star and unstar answer 201
 * with the project or 304 when nothing changes, star_count follows, starrers list with search and
 * private profiles hidden, a user's starred and personal projects, `starred=true`, and what a
 * user's deletion does to their stars.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('project stars', () => {
  let t: TestApp;
  let people: People;
  let privateProject: number;
  let publicProject: number;

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    privateProject = await createProject(t, people);
    publicProject = await createProject(t, people, 'public');
  });
  after(async () => { await t.close(); });

  const star = (token: string, id: number, action = 'star') => t.request({ method: 'POST', url: `/api/v4/projects/${id}/${action}`, token });

  it('stars once, counts, and unstars once', async () => {
    const first = await star(people.tokens.guest, publicProject);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().id, publicProject);
    assert.equal(first.json().star_count, 1);
    // Entities::Project, not ProjectWithAccess.
    assert.equal('permissions' in first.json(), false);
    const again = await star(people.tokens.guest, publicProject);
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await star(people.tokens.nonMember, publicProject)).json().star_count, 2);
    const read = await t.request({ url: `/api/v4/projects/${publicProject}` });
    assert.equal(read.json().star_count, 2);
    const rows = await t.db.selectFrom('users_star_projects').selectAll().where('project_id', '=', publicProject).execute();
    assert.equal(rows.length, 2);

    const unstar = await star(people.tokens.guest, publicProject, 'unstar');
    assert.equal(unstar.statusCode, 201, unstar.body);
    assert.equal(unstar.json().star_count, 1);
    assert.equal((await star(people.tokens.guest, publicProject, 'unstar')).statusCode, 304);
    await star(people.tokens.nonMember, publicProject, 'unstar');
  });

  it('refuses anonymous callers and projects the caller may not read', async () => {
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${publicProject}/star` })).statusCode, 401);
    const hidden = await star(people.tokens.nonMember, privateProject);
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
  });

  it('lists starrers in the order they starred, with search, hiding private profiles from others', async () => {
    const alice = await createUser(t.db, { username: 'alice-star', name: 'Alice Starling' });
    const bob = await createUser(t.db, { username: 'bob-star', name: 'Bob', private_profile: 1 });
    const aliceToken = await createToken(t.db, alice);
    const bobToken = await createToken(t.db, bob);
    assert.equal((await star(aliceToken, publicProject)).statusCode, 201);
    assert.equal((await star(bobToken, publicProject)).statusCode, 201);

    const list = await t.request({ url: `/api/v4/projects/${publicProject}/starrers` });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().map((s: { user: { username: string } }) => s.user.username), ['alice-star']);
    assert.deepEqual(Object.keys(list.json()[0]), ['starred_since', 'user']);
    assert.deepEqual(Object.keys(list.json()[0].user), ['id', 'username', 'name', 'state', 'avatar_url', 'web_url']);
    assert.equal(list.headers['x-total'], '1');
    // Bob sees himself; an administrator sees everyone.
    const own = await t.request({ url: `/api/v4/projects/${publicProject}/starrers`, token: bobToken });
    assert.deepEqual(own.json().map((s: { user: { username: string } }) => s.user.username), ['alice-star', 'bob-star']);
    const admin = await t.request({ url: `/api/v4/projects/${publicProject}/starrers?search=STARLING`, token: ROOT_TOKEN });
    assert.deepEqual(admin.json().map((s: { user: { username: string } }) => s.user.username), ['alice-star']);
    const none = await t.request({ url: `/api/v4/projects/${publicProject}/starrers?search=nobody`, token: ROOT_TOKEN });
    assert.deepEqual(none.json(), []);

    // Deleting a user removes their stars, and the count follows.
    const del = await t.request({ method: 'DELETE', url: `/api/v4/users/${alice.id}?hard_delete=true`, token: ROOT_TOKEN });
    assert.ok([202, 204].includes(del.statusCode), del.body);
    let count = -1;
    for (let i = 0; i < 100 && count !== 1; i++) {
      count = (await t.request({ url: `/api/v4/projects/${publicProject}`, token: ROOT_TOKEN })).json().star_count;
      if (count !== 1) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(count, 1);
    await star(bobToken, publicProject, 'unstar');
  });

  it("lists a user's starred projects that the caller may see, and starred=true", async () => {
    assert.equal((await star(people.tokens.guest, privateProject)).statusCode, 201);
    assert.equal((await star(people.tokens.guest, publicProject)).statusCode, 201);
    const url = `/api/v4/users/${people.users.guest.username}/starred_projects`;
    const anonymous = await t.request({ url });
    assert.equal(anonymous.statusCode, 200, anonymous.body);
    assert.deepEqual(anonymous.json().map((p: { id: number }) => p.id), [publicProject]);
    const member = await t.request({ url, token: people.tokens.developer });
    assert.deepEqual(member.json().map((p: { id: number }) => p.id).sort(), [privateProject, publicProject].sort());
    assert.equal((await t.request({ url: '/api/v4/users/999999/starred_projects' })).statusCode, 404);

    const mine = await t.request({ url: '/api/v4/projects?starred=true', token: people.tokens.guest });
    assert.deepEqual(mine.json().map((p: { id: number }) => p.id).sort(), [privateProject, publicProject].sort());
    const others = await t.request({ url: '/api/v4/projects?starred=true', token: people.tokens.reporter });
    assert.deepEqual(others.json(), []);
    await star(people.tokens.guest, privateProject, 'unstar');
    await star(people.tokens.guest, publicProject, 'unstar');
  });

  it("lists a user's personal projects the caller may see, none of a private profile", async () => {
    const url = `/api/v4/users/${people.users.owner.id}/projects`;
    const anonymous = await t.request({ url });
    assert.equal(anonymous.statusCode, 200, anonymous.body);
    assert.deepEqual(anonymous.json().map((p: { id: number }) => p.id), [publicProject]);
    const member = await t.request({ url: `${url}?order_by=id&sort=asc`, token: people.tokens.guest });
    assert.deepEqual(member.json().map((p: { id: number }) => p.id), [privateProject, publicProject]);
    const byName = await t.request({ url: `/api/v4/users/${people.users.owner.username}/projects?visibility=private`, token: ROOT_TOKEN });
    assert.deepEqual(byName.json().map((p: { id: number }) => p.id), [privateProject]);
    assert.deepEqual((await t.request({ url: '/api/v4/users/no-such-user/projects' })).json(), { message: '404 User Not Found' });

    const shy = await createUser(t.db, { private_profile: 1 });
    const shyToken = await createToken(t.db, shy);
    const made = await t.request({ method: 'POST', url: '/api/v4/projects', token: shyToken, payload: { name: 'shy', visibility: 'public' } });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual((await t.request({ url: `/api/v4/users/${shy.id}/projects`, token: people.tokens.guest })).json(), []);
    assert.deepEqual((await t.request({ url: `/api/v4/users/${shy.id}/projects`, token: shyToken })).json().map((p: { id: number }) => p.id),
      [made.json().id]);
  });
});

describe("a project's users", () => {
  let t: TestApp;
  let people: People;

  before(async () => { t = await startTestApp(); people = await createPeople(t); });
  after(async () => { await t.close(); });

  it('lists members of the project and its groups once each, by id, with search and skip_users', async () => {
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Team', path: 'team', visibility: 'public' } });
    assert.equal(group.statusCode, 201, group.body);
    const groupMember = await createUser(t.db, { username: 'group-person', name: 'Grace Group' });
    // Also a direct member of the project: listed once.
    for (const user of [groupMember, people.users.guest]) {
      const add = await t.request({
        method: 'POST', url: `/api/v4/groups/${group.json().id}/members`, token: ROOT_TOKEN, payload: { user_id: user.id, access_level: 30 },
      });
      assert.equal(add.statusCode, 201, add.body);
    }
    const project = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'tool', namespace_id: group.json().id, visibility: 'public' },
    });
    assert.equal(project.statusCode, 201, project.body);
    const id = project.json().id as number;
    const add = await t.request({
      method: 'POST', url: `/api/v4/projects/${id}/members`, token: ROOT_TOKEN, payload: { user_id: people.users.guest.id, access_level: 10 },
    });
    assert.equal(add.statusCode, 201, add.body);

    const all = await t.request({ url: `/api/v4/projects/${id}/users` });
    assert.equal(all.statusCode, 200, all.body);
    const ids = all.json().map((u: { id: number }) => u.id);
    // root owns the group it made.
    assert.deepEqual(ids, [1, people.users.guest.id, groupMember.id].sort((a, b) => a - b));
    assert.deepEqual(Object.keys(all.json()[0]), ['id', 'username', 'name', 'state', 'avatar_url', 'web_url']);
    const found = await t.request({ url: `/api/v4/projects/${id}/users?search=grace` });
    assert.deepEqual(found.json().map((u: { id: number }) => u.id), [groupMember.id]);
    const skipped = await t.request({ url: `/api/v4/projects/${id}/users?skip_users[]=1&skip_users[]=${groupMember.id}` });
    assert.deepEqual(skipped.json().map((u: { id: number }) => u.id), [people.users.guest.id]);
    assert.equal((await t.request({ url: '/api/v4/projects/999999/users' })).statusCode, 404);
  });
});
