/**
 * Who may open, read, change and remove issues (issue 29): every role — anonymous, signed-in
 * non-member, Guest, Reporter, Developer, Maintainer, Owner, administrator — on a private and a
 * public project, and the issues feature set to private or disabled (PUT /projects/:id
 * issues_access_level), as ProjectPolicy and IssuePolicy of the Service 15.2 decide.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

type Role = 'anonymous' | 'non_member' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
const ROLES: Role[] = ['anonymous', 'non_member', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const LEVELS: Partial<Record<Role, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };

interface Expect { create: number; read: number; list: number; update: number; remove: number }

describe('issue permissions', () => {
  let t: TestApp;
  const tokens = new Map<Role, string | undefined>();

  before(async () => {
    t = await startTestApp();
    tokens.set('anonymous', undefined);
    tokens.set('admin', ROOT_TOKEN);
    for (const role of ROLES.filter((r) => r !== 'anonymous' && r !== 'admin')) {
      const user = await createUser(t.db, { username: `perm-${role}` });
      tokens.set(role, await createToken(t.db, user));
    }
  });
  after(async () => { await t?.close(); });

  const api = (method: string, url: string, role: Role, payload?: object) => {
    const token = tokens.get(role);
    return t.request({ method: method as 'GET', url: `/api/v4${url}`, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });
  };

  async function projectWith(name: string, visibility: string): Promise<number> {
    const p = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name, visibility } });
    assert.equal(p.statusCode, 201, p.body);
    const id = (p.json() as { id: number }).id;
    for (const role of ROLES) {
      const level = LEVELS[role];
      if (level === undefined) continue;
      const userId = (await t.db.selectFrom('users').select('id').where('username', '=', `perm-${role}`).executeTakeFirstOrThrow()).id;
      const m = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/members`, token: ROOT_TOKEN, payload: { user_id: userId, access_level: level } });
      assert.equal(m.statusCode, 201, m.body);
    }
    return id;
  }

  /** Each role acts on the administrator's issue `iid`, so no role is its author or assignee. */
  async function check(projectId: number, iid: number, role: Role, e: Expect, label: string) {
    const create = await api('POST', `/projects/${projectId}/issues`, role, { title: `by ${role}` });
    assert.equal(create.statusCode, e.create, `${label} ${role} create: ${create.body}`);
    const read = await api('GET', `/projects/${projectId}/issues/${iid}`, role);
    assert.equal(read.statusCode, e.read, `${label} ${role} read: ${read.body}`);
    const list = await api('GET', `/projects/${projectId}/issues`, role);
    assert.equal(list.statusCode, e.list === -1 ? 200 : e.list, `${label} ${role} list: ${list.body}`);
    if (e.list === -1) assert.deepEqual(list.json(), [], `${label} ${role} list is empty`);
    const update = await api('PUT', `/projects/${projectId}/issues/${iid}`, role, { description: `edited by ${role}` });
    assert.equal(update.statusCode, e.update, `${label} ${role} update: ${update.body}`);
    if (e.remove === 204) {
      const spare = (await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/issues`, token: ROOT_TOKEN, payload: { title: 'spare' } })).json() as { iid: number };
      const remove = await api('DELETE', `/projects/${projectId}/issues/${spare.iid}`, role);
      assert.equal(remove.statusCode, 204, `${label} ${role} delete: ${remove.body}`);
    } else {
      const remove = await api('DELETE', `/projects/${projectId}/issues/${iid}`, role);
      assert.equal(remove.statusCode, e.remove, `${label} ${role} delete: ${remove.body}`);
    }
  }

  const member: Expect = { create: 201, read: 200, list: 200, update: 200, remove: 403 };
  const cases: [string, string, string, Record<Role, Expect>][] = [
    ['private project', 'private', 'enabled', {
      anonymous: { create: 401, read: 404, list: 404, update: 401, remove: 401 },
      non_member: { create: 404, read: 404, list: 404, update: 404, remove: 404 },
      guest: { create: 201, read: 200, list: 200, update: 403, remove: 403 },
      reporter: member, developer: member, maintainer: member,
      owner: { ...member, remove: 204 },
      admin: { ...member, remove: 204 },
    }],
    ['public project', 'public', 'enabled', {
      anonymous: { create: 401, read: 200, list: 200, update: 401, remove: 401 },
      non_member: { create: 201, read: 200, list: 200, update: 403, remove: 403 },
      guest: { create: 201, read: 200, list: 200, update: 403, remove: 403 },
      reporter: member, developer: member, maintainer: member,
      owner: { ...member, remove: 204 },
      admin: { ...member, remove: 204 },
    }],
    ['public project, issues private to members', 'public', 'private', {
      anonymous: { create: 401, read: 404, list: -1, update: 401, remove: 401 },
      non_member: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      guest: { create: 201, read: 200, list: 200, update: 403, remove: 403 },
      reporter: member, developer: member, maintainer: member,
      owner: { ...member, remove: 204 },
      admin: { ...member, remove: 204 },
    }],
    ['private project, issues disabled', 'private', 'disabled', {
      anonymous: { create: 401, read: 404, list: 404, update: 401, remove: 401 },
      non_member: { create: 404, read: 404, list: 404, update: 404, remove: 404 },
      guest: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      reporter: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      developer: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      maintainer: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      owner: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
      admin: { create: 403, read: 404, list: -1, update: 404, remove: 404 },
    }],
  ];

  for (const [label, visibility, issuesAccess, expected] of cases) {
    it(`${label}: create, read, list, update, delete by role`, async () => {
      const projectId = await projectWith(label.replace(/[^a-z]+/g, '-'), visibility);
      // Seed the administrator's issue while issues are on, then set the feature level under test.
      const seed = await t.request({ method: 'POST', url: `/api/v4/projects/${projectId}/issues`, token: ROOT_TOKEN, payload: { title: 'seed' } });
      assert.equal(seed.statusCode, 201, seed.body);
      if (issuesAccess !== 'enabled') {
        const u = await t.request({ method: 'PUT', url: `/api/v4/projects/${projectId}`, token: ROOT_TOKEN, payload: { issues_access_level: issuesAccess } });
        assert.equal(u.statusCode, 200, u.body);
      }
      const iid = (seed.json() as { iid: number }).iid;
      for (const role of ROLES) await check(projectId, iid, role, expected[role], label);
    });
  }

  it("lets a guest edit the issue they opened, and a confidential issue's author and assignee read it", async () => {
    const projectId = await projectWith('confidential-people', 'private');
    const own = (await api('POST', `/projects/${projectId}/issues`, 'guest', { title: 'mine', confidential: true })).json() as { iid: number };
    assert.equal((await api('PUT', `/projects/${projectId}/issues/${own.iid}`, 'guest', { title: 'still mine' })).statusCode, 200);
    assert.equal((await api('GET', `/projects/${projectId}/issues/${own.iid}`, 'guest')).statusCode, 200);
    const other = (await api('POST', `/projects/${projectId}/issues`, 'reporter', { title: 'secret', confidential: true })).json() as { iid: number };
    assert.equal((await api('GET', `/projects/${projectId}/issues/${other.iid}`, 'guest')).statusCode, 404);
    assert.equal((await api('GET', `/projects/${projectId}/issues/${other.iid}`, 'developer')).statusCode, 200);
    const guestId = (await t.db.selectFrom('users').select('id').where('username', '=', 'perm-guest').executeTakeFirstOrThrow()).id;
    const assigned = await api('PUT', `/projects/${projectId}/issues/${other.iid}`, 'reporter', { assignee_ids: [guestId] });
    assert.equal(assigned.statusCode, 200, assigned.body);
    assert.equal((await api('GET', `/projects/${projectId}/issues/${other.iid}`, 'guest')).statusCode, 200);
    assert.equal((await api('PUT', `/projects/${projectId}/issues/${other.iid}`, 'guest', { state_event: 'close' })).json().state, 'closed');
  });
});
