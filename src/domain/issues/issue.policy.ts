/**
 * What a viewer may do with one issue (IssuePolicy of the Service 15.2) on top of the project's
 * table (project.policy.ts): a confidential issue is visible only to Reporters and up, its author
 * and its assignees — in lists, counts, search, notes and todos alike (issue 29); its author and
 * assignees may also edit it, as Reporters may; a locked discussion takes comments from project
 * members only (IssuablePolicy: `locked & ~is_project_member` prevents create_note).
 */
import { ACCESS_LEVELS, type Actor } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';

export interface IssueSubject {
  author_id: number;
  confidential: number | boolean;
  discussion_locked: number | boolean | null;
  /** The assignees' user ids. */
  assignee_ids: readonly number[];
}

function involved(actor: Actor, issue: IssueSubject): boolean {
  const id = actor.user?.id;
  return id !== undefined && (issue.author_id === id || issue.assignee_ids.includes(id));
}

export function canReadIssue(actor: Actor, project: ProjectSubject, issue: IssueSubject): boolean {
  if (!canOnProject(actor, 'read_issue', project)) return false;
  if (!issue.confidential) return true;
  return canOnProject(actor, 'read_confidential_issues', project) || involved(actor, issue);
}

export function canUpdateIssue(actor: Actor, project: ProjectSubject, issue: IssueSubject): boolean {
  if (!canReadIssue(actor, project, issue)) return false;
  if (canOnProject(actor, 'admin_issue', project)) return true;
  return actor.user !== null && !project.archived && involved(actor, issue);
}

export function canCommentOnIssue(actor: Actor, project: ProjectSubject, issue: IssueSubject): boolean {
  if (!canReadIssue(actor, project, issue) || !canOnProject(actor, 'create_note', project)) return false;
  return !issue.discussion_locked || actor.accessLevel >= ACCESS_LEVELS.guest || Boolean(actor.user?.admin);
}
