/**
 * The group permission table (app/policies/group_policy.rb, reduced): reading follows the group's
 * visibility or any membership; creating projects and subgroups takes Maintainer (the Service's
 * default project_creation_level and subgroup_creation_level); managing members and the group
 * itself takes Owner.
 */
import { ACCESS_LEVELS, type Actor, visibleWithoutMembership } from './access.ts';

export type GroupAction =
  | 'read_group' | 'create_projects' | 'create_subgroup' | 'admin_group_member' | 'admin_group' | 'read_group_audit_events'
  | 'admin_label' | 'admin_milestone' | 'admin_issue_board' | 'read_deploy_token';

const GROUP_RULES: Record<GroupAction, { minLevel: number; byVisibility: boolean }> = {
  read_group: { minLevel: ACCESS_LEVELS.guest, byVisibility: true },
  create_projects: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false },
  create_subgroup: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false },
  admin_group_member: { minLevel: ACCESS_LEVELS.owner, byVisibility: false },
  admin_group: { minLevel: ACCESS_LEVELS.owner, byVisibility: false },
  // EE GroupPolicy: developers read audit events (below Owner, only their own).
  read_group_audit_events: { minLevel: ACCESS_LEVELS.developer, byVisibility: false },
  // GroupPolicy 15.2: Reporters triage — group labels, milestones and boards are theirs to manage.
  admin_label: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false },
  admin_milestone: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false },
  admin_issue_board: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false },
  // GroupPolicy 15.2: Maintainers read the group's deploy tokens; creating and deleting them is admin_group's (Owner).
  read_deploy_token: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false },
};

export function canOnGroup(actor: Actor, action: GroupAction, group: { visibility_level: number }): boolean {
  const rule = GROUP_RULES[action];
  if (actor.user?.admin) return true;
  if (actor.accessLevel >= rule.minLevel) return true;
  return rule.byVisibility && visibleWithoutMembership(actor, group.visibility_level);
}
