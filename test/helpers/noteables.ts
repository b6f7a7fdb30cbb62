/**
 * Noteables for the notes, discussions and award emoji tests (issue 29): a project with a member
 * of every role, issues written straight into the database (their iid from internal_ids, as the
 * issues service takes it) and project snippets as rows of their project.
 */
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import type { IssueRow } from '../../src/db/tables/issues.ts';
import type { Flag } from '../../src/db/types.ts';
import type { SnippetRow } from '../../src/db/tables/snippets.ts';
import { nextIid } from '../../src/domain/internal-ids/internal-ids.queries.ts';
import { ROOT_TOKEN, type TestApp } from './app.ts';
import { createToken, createUser } from './factories.ts';

export const ROLES = ['guest', 'reporter', 'developer', 'maintainer', 'owner'] as const;
export type MemberRole = (typeof ROLES)[number];
const LEVELS: Record<MemberRole, number> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };

export interface People {
  users: Record<MemberRole | 'nonMember', UserRow>;
  tokens: Record<MemberRole | 'nonMember' | 'admin', string>;
}

/** One user per role plus a non-member; the owner creates the projects. */
export async function createPeople(t: TestApp): Promise<People> {
  const users = {} as People['users'];
  const tokens = { admin: ROOT_TOKEN } as People['tokens'];
  for (const role of [...ROLES, 'nonMember'] as const) {
    users[role] = await createUser(t.db);
    tokens[role] = await createToken(t.db, users[role]);
  }
  return { users, tokens };
}

/** A project of the owner's with the other roles as members. */
export async function createProject(t: TestApp, people: People, visibility = 'private'): Promise<number> {
  const res = await t.request({
    method: 'POST', url: '/api/v4/projects', token: people.tokens.owner,
    payload: { name: `P ${Math.random().toString(36).slice(2)}`, visibility },
  });
  assert.equal(res.statusCode, 201, res.body);
  const id = res.json().id as number;
  for (const role of ROLES) {
    if (role === 'owner') continue;
    const add = await t.request({
      method: 'POST', url: `/api/v4/projects/${id}/members`, token: people.tokens.owner,
      payload: { user_id: people.users[role].id, access_level: LEVELS[role] },
    });
    assert.equal(add.statusCode, 201, add.body);
  }
  return id;
}

export async function createIssue(
  t: TestApp, projectId: number, authorId: number, attrs: { confidential?: Flag; discussion_locked?: Flag | null; title?: string } = {},
): Promise<IssueRow> {
  return t.db.transaction().execute(async (trx) => {
    const iid = await nextIid(trx, { project_id: projectId }, 'issues');
    const now = new Date().toISOString();
    return trx.insertInto('issues').values({
      iid, project_id: projectId, author_id: authorId, title: 'An issue', description: null, state: 'opened',
      milestone_id: null, due_date: null, discussion_locked: null, relative_position: null, closed_at: null,
      closed_by_id: null, updated_by_id: null, last_edited_at: null, last_edited_by_id: null, moved_to_id: null,
      duplicated_to_id: null, created_at: now, updated_at: now, ...attrs,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

/** A project snippet row (its repository plays no part in notes). */
export async function createProjectSnippet(t: TestApp, projectId: number, authorId: number, visibilityLevel = 0): Promise<SnippetRow> {
  const now = new Date().toISOString();
  return t.db.insertInto('snippets').values({
    title: 'A snippet', description: null, file_name: 'a.txt', content: 'x', file_paths: null, author_id: authorId,
    visibility_level: visibilityLevel, repository_storage: 'default', disk_path: `@snippets/p${projectId}-${Math.random()}.git`,
    project_id: projectId, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}
