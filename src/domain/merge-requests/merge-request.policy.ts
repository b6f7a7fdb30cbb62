/**
 * MergeRequestPolicy of the Service 15.2 (app/policies/merge_request_policy.rb on IssuablePolicy),
 * as far as kiln serves it: reading follows the project (read_merge_request); its author and
 * assignees may update and reopen it besides Developers (IssuablePolicy `assignee_or_author`);
 * merging is pushing to the target branch (Developer, or the protected branch's merge level);
 * approving is for whoever may update it; removing is the Owner's.
 */
import type { Actor } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';
import { refActorFor } from '../protected-refs/protected-refs.ts';
import { canMergeToBranch, type ProtectionRules } from '../protected-refs/ref-rules.ts';

export interface MergeRequestSubject {
  author_id: number;
  assignee_ids: readonly number[];
  discussion_locked: number | null;
}

export function canReadMergeRequest(actor: Actor, project: ProjectSubject): boolean {
  return canOnProject(actor, 'read_merge_request', project);
}

export function canUpdateMergeRequest(actor: Actor, project: ProjectSubject, mr: MergeRequestSubject): boolean {
  if (canOnProject(actor, 'update_merge_request', project)) return true;
  const id = actor.user?.id;
  if (id === undefined || !canReadMergeRequest(actor, project) || project.archived) return false;
  return mr.author_id === id || mr.assignee_ids.includes(id);
}

/**
 * MergeRequest#can_be_merged_by?: pushing to the target branch, where a protected branch asks for
 * its merge level instead (ProtectedBranch.protected_ref_accessible_to? with merge_access_levels).
 */
export function canMergeMergeRequest(
  actor: Actor, project: ProjectSubject & { id: number }, rules: ProtectionRules, targetBranch: string,
): boolean {
  return canMergeToBranch(rules, refActorFor(actor, project), targetBranch);
}

/** create_note on the request: a locked discussion takes members only (IssuablePolicy `locked & ~is_project_member`). */
export function canCommentOnMergeRequest(actor: Actor, project: ProjectSubject, mr: MergeRequestSubject): boolean {
  if (!canReadMergeRequest(actor, project) || !canOnProject(actor, 'create_note', project)) return false;
  if (mr.discussion_locked === 1 && !actor.user?.admin && actor.accessLevel < 10) return false;
  return true;
}
