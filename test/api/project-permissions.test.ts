/**
 * The permission table (issue 3, Done when): anonymous, guest, reporter, developer, maintainer,
 * owner and administrator × read, push, update and delete, on a private project and on a
 * public one. Read, update and delete go through the API; push is asked of the same policy the
 * git endpoint uses (test/clients/git-http.test.ts pushes for real).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { canOnProject, PROJECT_RULES, type ProjectAction } from '../../src/domain/permissions/project.policy.ts';
import type { Actor } from '../../src/domain/permissions/access.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

type Role = 'anonymous' | 'non_member' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'administrator';
const LEVELS: Partial<Record<Role, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };

/** Expected answers on a private project: read (GET), update (PUT), delete (DELETE). */
const EXPECTED: Record<Role, { read: number; update: number; delete: number }> = {
  anonymous: { read: 404, update: 401, delete: 401 },
  non_member: { read: 404, update: 404, delete: 404 },
  guest: { read: 200, update: 403, delete: 403 },
  reporter: { read: 200, update: 403, delete: 403 },
  developer: { read: 200, update: 403, delete: 403 },
  maintainer: { read: 200, update: 200, delete: 403 },
  owner: { read: 200, update: 200, delete: 202 },
  administrator: { read: 200, update: 200, delete: 202 },
};

describe('project permission table', () => {
  let t: TestApp;
  let creatorToken: string;
  const tokens: Partial<Record<Role, string>> = {};
  const users: Partial<Record<Role, UserRow>> = {};

  before(async () => {
    t = await startTestApp();
    const creator = await createUser(t.db);
    creatorToken = await createToken(t.db, creator);
    for (const role of Object.keys(EXPECTED) as Role[]) {
      if (role === 'anonymous') continue;
      if (role === 'administrator') {
        tokens[role] = ROOT_TOKEN;
        continue;
      }
      users[role] = await createUser(t.db);
      tokens[role] = await createToken(t.db, users[role]!);
    }
  });
  after(async () => { await t.close(); });

  async function projectWithMembers(visibility: string): Promise<number> {
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: creatorToken, payload: { name: `P ${Math.random().toString(36).slice(2)}`, visibility } });
    const id = res.json().id as number;
    for (const [role, level] of Object.entries(LEVELS)) {
      const add = await t.request({ method: 'POST', url: `/api/v4/projects/${id}/members`, token: creatorToken, payload: { user_id: users[role as Role]!.id, access_level: level } });
      assert.equal(add.statusCode, 201, add.body);
    }
    return id;
  }

  for (const role of Object.keys(EXPECTED) as Role[]) {
    it(`${role}: read, update and delete a private project`, async () => {
      const id = await projectWithMembers('private');
      const token = tokens[role];
      const read = await t.request({ url: `/api/v4/projects/${id}`, token });
      assert.equal(read.statusCode, EXPECTED[role].read, `read ${read.body}`);
      const update = await t.request({ method: 'PUT', url: `/api/v4/projects/${id}`, token, payload: { description: role } });
      assert.equal(update.statusCode, EXPECTED[role].update, `update ${update.body}`);
      const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${id}`, token });
      assert.equal(del.statusCode, EXPECTED[role].delete, `delete ${del.body}`);
    });
  }

  it('everyone reads a public project; only members change it', async () => {
    const id = await projectWithMembers('public');
    for (const role of Object.keys(EXPECTED) as Role[]) {
      assert.equal((await t.request({ url: `/api/v4/projects/${id}`, token: tokens[role] })).statusCode, 200, role);
    }
    assert.equal((await t.request({ method: 'PUT', url: `/api/v4/projects/${id}`, token: tokens.non_member, payload: { description: 'x' } })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${id}`, token: tokens.maintainer })).statusCode, 403);
  });

  it('internal projects are readable by signed-in users who are not external', async () => {
    const id = await projectWithMembers('internal');
    assert.equal((await t.request({ url: `/api/v4/projects/${id}` })).statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/projects/${id}`, token: tokens.non_member })).statusCode, 200);
    const external = await createUser(t.db, { external: 1 });
    assert.equal((await t.request({ url: `/api/v4/projects/${id}`, token: await createToken(t.db, external) })).statusCode, 404);
  });

  describe('the policy table itself', () => {
    const actor = (role: Role): Actor => {
      if (role === 'anonymous') return { user: null, accessLevel: 0 };
      return { user: { id: 1, admin: role === 'administrator' ? 1 : 0, external: 0 }, accessLevel: LEVELS[role] ?? 0 };
    };
    const allowed = (visibility: number, archived = 0) => (action: ProjectAction) => (Object.keys(EXPECTED) as Role[])
      .filter((role) => canOnProject(actor(role), action, { visibility_level: visibility, archived }));

    it('grants push from Developer up, and to nobody on an archived project', () => {
      assert.deepEqual(allowed(0)('push_code'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(20)('push_code'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0, 1)('push_code'), []);
    });

    it('grants download to reporters of private projects and to everyone on public ones', () => {
      assert.deepEqual(allowed(0)('download_code'), ['reporter', 'developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(20)('download_code'), Object.keys(EXPECTED));
      assert.deepEqual(allowed(10)('download_code'), Object.keys(EXPECTED).filter((r) => r !== 'anonymous'));
    });

    it('gives CI abilities as reference §3.1: read_build Reporter, update_build Developer, admin_build Maintainer', () => {
      assert.deepEqual(allowed(0)('read_build'), ['reporter', 'developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0)('update_build'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0)('admin_build'), ['maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0)('delete_project'), ['owner', 'administrator']);
      assert.deepEqual(allowed(0)('destroy_pipeline'), ['owner', 'administrator']);
      // What the project entity asks before showing runners_token (issue 35, item 12).
      assert.deepEqual(allowed(20)('admin_project'), ['maintainer', 'owner', 'administrator']);
      // Audit events: Developers read their own, Maintainers everyone's (issue 35, item 9).
      assert.deepEqual(allowed(0)('read_project_audit_events'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(Object.keys(PROJECT_RULES), [
        'read_project', 'read_members', 'download_code', 'read_build', 'push_code', 'update_build', 'admin_build', 'admin_members',
        'update_project', 'admin_project', 'archive_project', 'delete_project', 'destroy_pipeline', 'read_project_audit_events',
        'read_issue', 'create_issue', 'admin_issue', 'read_confidential_issues', 'destroy_issue', 'read_issue_board',
        'admin_issue_board', 'read_label', 'admin_label', 'read_milestone', 'admin_milestone', 'read_note', 'create_note',
        'admin_note', 'award_emoji', 'read_snippet', 'create_snippet', 'admin_snippet',
        'read_merge_request', 'create_merge_request_in', 'create_merge_request_from', 'admin_merge_request', 'update_merge_request',
        'destroy_merge_request', 'fork_project', 'read_release', 'create_release', 'update_release', 'destroy_release',
        'read_package', 'create_package', 'destroy_package', 'read_wiki', 'create_wiki', 'admin_wiki',
        'read_environment', 'create_environment', 'update_environment', 'destroy_environment', 'stop_environment',
        'read_deployment', 'create_deployment', 'update_deployment', 'read_statistics',
      ]);
      // Wikis (ProjectPolicy 15.2): read with the project, written by Developers, pages removed by Maintainers.
      assert.deepEqual(allowed(20)('read_wiki'), Object.keys(EXPECTED));
      assert.deepEqual(allowed(0)('create_wiki'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0)('admin_wiki'), ['maintainer', 'owner', 'administrator']);
      // Merge requests (issue 30): read with the code, opened from a branch and merged by Developers, removed by Owners.
      assert.deepEqual(allowed(0)('read_merge_request'), ['reporter', 'developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(20)('read_merge_request'), Object.keys(EXPECTED));
      assert.deepEqual(allowed(0)('update_merge_request'), ['developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(0)('destroy_merge_request'), ['owner', 'administrator']);
      // Releases (ProjectPolicy 15.2): read with the project, written by Developers.
      assert.deepEqual(allowed(20)('read_release'), Object.keys(EXPECTED));
      assert.deepEqual(allowed(0)('create_release'), ['developer', 'maintainer', 'owner', 'administrator']);
      // Project snippets (ProjectPolicy 15.2): read with the project, written by Reporters, anyone's changed by Maintainers.
      assert.deepEqual(allowed(20)('read_snippet'), Object.keys(EXPECTED));
      assert.deepEqual(allowed(20)('create_snippet'), ['reporter', 'developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(20)('admin_snippet'), ['maintainer', 'owner', 'administrator']);
    });

    it('gives the collaboration abilities of ProjectPolicy: triage to Reporters, removal to Owners (issue 29)', () => {
      const everyone = Object.keys(EXPECTED);
      const members = ['guest', 'reporter', 'developer', 'maintainer', 'owner', 'administrator'];
      assert.deepEqual(allowed(0)('read_issue'), members);
      assert.deepEqual(allowed(20)('read_issue'), everyone);
      assert.deepEqual(allowed(20)('create_issue'), everyone);
      assert.deepEqual(allowed(0)('create_issue'), members);
      for (const triage of ['admin_issue', 'admin_label', 'admin_milestone', 'admin_issue_board', 'read_confidential_issues'] as const) {
        assert.deepEqual(allowed(20)(triage), ['reporter', 'developer', 'maintainer', 'owner', 'administrator'], triage);
      }
      assert.deepEqual(allowed(20)('destroy_issue'), ['owner', 'administrator']);
      assert.deepEqual(allowed(20)('admin_note'), ['maintainer', 'owner', 'administrator']);
      assert.deepEqual(allowed(20, 1)('create_issue'), []);
      assert.deepEqual(allowed(20, 1)('read_issue'), everyone);
    });

    it('withholds issues by the project feature: disabled from everyone, private from non-members (issue 29)', () => {
      const ask = (level: number) => (Object.keys(EXPECTED) as Role[])
        .filter((role) => canOnProject(actor(role), 'read_issue', { visibility_level: 20, archived: 0, issues_access_level: level }));
      assert.deepEqual(ask(0), []);
      assert.deepEqual(ask(10), ['guest', 'reporter', 'developer', 'maintainer', 'owner', 'administrator']);
      assert.deepEqual(ask(20), Object.keys(EXPECTED));
      // Labels are not part of the issues feature.
      assert.equal(canOnProject(actor('non_member'), 'read_label', { visibility_level: 20, archived: 0, issues_access_level: 0 }), true);
    });
  });
});
