/** Issues and what hangs off them, written straight into the test database (the issues API is another helper's). */
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/types.ts';
import type { IssueRow } from '../../src/db/tables/issues.ts';
import { nextIid } from '../../src/domain/internal-ids/internal-ids.queries.ts';
import { nowIso } from '../../src/domain/clock.ts';
import type { TestApp } from './app.ts';

export interface IssueAttrs {
  project_id: number;
  author_id: number;
  title?: string;
  description?: string | null;
  confidential?: boolean;
  state?: 'opened' | 'closed';
  assignee_ids?: number[];
  milestone_id?: number | null;
  label_ids?: number[];
}

export async function createIssue(db: Kysely<DB>, a: IssueAttrs): Promise<IssueRow> {
  return db.transaction().execute(async (trx) => {
    const iid = await nextIid(trx, { project_id: a.project_id }, 'issues');
    const now = nowIso();
    const issue = await trx.insertInto('issues').values({
      iid, project_id: a.project_id, author_id: a.author_id, title: a.title ?? `Issue ${iid}`, description: a.description ?? null,
      state: a.state ?? 'opened', milestone_id: a.milestone_id ?? null, due_date: null, confidential: a.confidential ? 1 : 0,
      discussion_locked: null, relative_position: null, closed_at: a.state === 'closed' ? now : null, closed_by_id: null,
      updated_by_id: null, last_edited_at: null, last_edited_by_id: null, moved_to_id: null, duplicated_to_id: null,
      created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    for (const user_id of a.assignee_ids ?? []) await trx.insertInto('issue_assignees').values({ issue_id: issue.id, user_id }).execute();
    for (const label_id of a.label_ids ?? []) {
      await trx.insertInto('label_links').values({ label_id, target_type: 'Issue', target_id: issue.id, created_at: now, updated_at: now }).execute();
    }
    return issue;
  });
}

export async function createLabel(db: Kysely<DB>, a: { project_id?: number; group_id?: number; title: string; color?: string }) {
  const now = nowIso();
  return db.insertInto('labels').values({
    project_id: a.project_id ?? null, group_id: a.group_id ?? null, title: a.title, color: a.color ?? '#428bca', description: null,
    created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function createMilestone(db: Kysely<DB>, a: { project_id: number; title: string }) {
  return db.transaction().execute(async (trx) => {
    const iid = await nextIid(trx, { project_id: a.project_id }, 'milestones');
    const now = nowIso();
    return trx.insertInto('milestones').values({
      iid, project_id: a.project_id, group_id: null, title: a.title, description: null, state: 'active', due_date: null,
      start_date: null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

/** A project made through the API by `token`'s user, with members at the given levels; returns its id and path. */
export async function createProjectWithMembers(
  t: TestApp, token: string, members: { user_id: number; access_level: number }[] = [], attrs: Record<string, unknown> = {},
): Promise<{ id: number; path_with_namespace: string; namespace_id: number }> {
  const res = await t.request({
    method: 'POST', url: '/api/v4/projects', token,
    payload: { name: `P ${Math.random().toString(36).slice(2, 10)}`, visibility: 'private', ...attrs },
  });
  if (res.statusCode !== 201) throw new Error(`project: ${res.statusCode} ${res.body}`);
  const p = res.json();
  for (const m of members) {
    const add = await t.request({ method: 'POST', url: `/api/v4/projects/${p.id}/members`, token, payload: m });
    if (add.statusCode !== 201) throw new Error(`member: ${add.statusCode} ${add.body}`);
  }
  return { id: p.id, path_with_namespace: p.path_with_namespace, namespace_id: p.namespace.id };
}

export async function systemNotesOf(db: Kysely<DB>, issueId: number): Promise<string[]> {
  const rows = await db.selectFrom('notes').select('note').where('noteable_type', '=', 'Issue').where('noteable_id', '=', issueId)
    .where('system', '=', 1).orderBy('id').execute();
  return rows.map((r) => r.note);
}
