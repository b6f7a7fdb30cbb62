/**
 * The project permission table (app/policies/project_policy.rb, reduced to what kiln serves):
 * one row per action with the lowest membership role that grants it, whether readers who are not
 * members get it through the project's visibility, and whether an archived project withholds it.
 * Administrators may do everything. Later areas (CI jobs: read_build / update_build / admin_build,
 * reference §3.1) ask the same table.
 */
import { ACCESS_LEVELS, type Actor, visibleWithoutMembership } from './access.ts';

export type ProjectAction =
  | 'read_project'
  | 'download_code'
  | 'push_code'
  | 'read_build'
  | 'update_build'
  | 'admin_build'
  | 'read_members'
  | 'admin_members'
  | 'update_project'
  | 'admin_project'
  | 'archive_project'
  | 'delete_project'
  | 'destroy_pipeline'
  | 'read_project_audit_events';

interface Rule {
  /** Lowest member access level that grants the action. */
  minLevel: number;
  /** Granted to anyone who can see the project by its visibility (public/internal). */
  byVisibility: boolean;
  /** Withheld while the project is archived (archived projects are read-only). */
  blockedWhenArchived: boolean;
}

export const PROJECT_RULES: Record<ProjectAction, Rule> = {
  read_project: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  read_members: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  // Guests of a private project may not read its code; everyone may on public/internal ones.
  download_code: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false },
  // Builds are public on public/internal projects by default (public_builds); Reporter otherwise.
  read_build: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false },
  push_code: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  update_build: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  admin_build: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: true },
  admin_members: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: false },
  update_project: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: false },
  // What the Service's entity asks before showing runners_token, import_error, build_git_strategy.
  admin_project: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: false },
  // The Service gives archiving and removal to owners only.
  archive_project: { minLevel: ACCESS_LEVELS.owner, byVisibility: false, blockedWhenArchived: false },
  delete_project: { minLevel: ACCESS_LEVELS.owner, byVisibility: false, blockedWhenArchived: false },
  // Deleting a pipeline is for owners (PipelinePolicy destroy_pipeline: owner_access).
  destroy_pipeline: { minLevel: ACCESS_LEVELS.owner, byVisibility: false, blockedWhenArchived: false },
  // EE ProjectPolicy: developer_access reads audit events (below Maintainer, only one's own).
  read_project_audit_events: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: false },
};

export interface ProjectSubject {
  visibility_level: number;
  archived: number | boolean;
  /** "Public pipelines" (default on); absent counts as on. */
  public_builds?: number | boolean;
}

export function canOnProject(actor: Actor, action: ProjectAction, project: ProjectSubject): boolean {
  const rule = PROJECT_RULES[action];
  if (rule.blockedWhenArchived && project.archived) return false;
  if (actor.user?.admin) return true;
  if (actor.accessLevel >= rule.minLevel) return true;
  // Jobs are readable by visibility only while the project keeps "Public pipelines" on (reference §3.1).
  if (action === 'read_build' && project.public_builds !== undefined && !project.public_builds) return false;
  return rule.byVisibility && visibleWithoutMembership(actor, project.visibility_level);
}
