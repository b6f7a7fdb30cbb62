/**
 * Who may link and unlink an issue (IssuePolicy `admin_issue_link` of the Service 15.2): anyone
 * who can read the issue and has at least the Guest role in its project (administrators too),
 * in a project that is not archived; a link needs it on both issues
 * ("You must have at least the Guest role in both projects").
 */
import { ACCESS_LEVELS, type Actor } from '../permissions/access.ts';
import type { ProjectSubject } from '../permissions/project.policy.ts';
import { canReadIssue, type IssueSubject } from './issue.policy.ts';

export function canAdminIssueLink(actor: Actor, project: ProjectSubject, issue: IssueSubject): boolean {
  if (!canReadIssue(actor, project, issue) || project.archived) return false;
  return Boolean(actor.user?.admin) || actor.accessLevel >= ACCESS_LEVELS.guest;
}
