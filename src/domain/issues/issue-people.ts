/**
 * Who an issue's writes may name: assignees the Service keeps (IssuableBaseService#filter_assignees
 * drops users who may not read the project's issues; the Free tier keeps one assignee, Issuable
 * #allows_multiple_assignees? being a licensed feature) and the users a text mentions who may read
 * the issue (TodoService#filter_todo_users), for their todos.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { mentionedUsernames } from '../todos/todos.queries.ts';
import { canReadIssue, type IssueSubject } from './issue.policy.ts';
import { activeUsersByUsernames } from './issue-writes.queries.ts';

export interface IssueProject {
  project: ProjectRow;
  /** The project's namespace and its ancestors. */
  lineage: number[];
}

/**
 * The assignees an issue gets from `ids` (IssuableBaseService#filter_assignees_using_checks): the
 * first id only; `[0]` or `[]` clears them; a user who does not exist or may not read the
 * project's issues leaves them as they are (null).
 */
export async function keptAssignees(db: Kysely<DB>, where: IssueProject, ids: readonly number[]): Promise<number[] | null> {
  if (ids.length === 0 || ids[0] === 0) return [];
  const [user] = await findUsersByIds(db, [ids[0]]);
  if (!user) return null;
  const actor = await projectActor(db, user, where.project.id, where.lineage);
  return canOnProject(actor, 'read_issue', where.project) ? [user.id] : null;
}

/** Users `text` mentions who may read the issue, less `except` (the writer, and those already mentioned). */
export async function mentionedReaders(
  db: Kysely<DB>, where: IssueProject, issue: IssueSubject, text: string | null, except: readonly number[],
): Promise<UserRow[]> {
  if (!text) return [];
  const users = await activeUsersByUsernames(db, mentionedUsernames(text));
  const out: UserRow[] = [];
  for (const user of users) {
    if (except.includes(user.id)) continue;
    const actor = await projectActor(db, user, where.project.id, where.lineage);
    if (canReadIssue(actor, where.project, issue)) out.push(user);
  }
  return out;
}
