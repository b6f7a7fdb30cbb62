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
  | 'read_project_audit_events'
  // The collaboration core (issue 29): ProjectPolicy's issue, label, milestone, note and board abilities.
  | 'read_issue'
  | 'create_issue'
  | 'admin_issue'
  | 'read_confidential_issues'
  | 'destroy_issue'
  | 'read_label'
  | 'admin_label'
  | 'read_milestone'
  | 'admin_milestone'
  | 'read_note'
  | 'create_note'
  | 'admin_note'
  | 'award_emoji'
  | 'read_issue_board'
  | 'admin_issue_board'
  // Project snippets (ProjectPolicy 15.2 with ProjectSnippetPolicy on top, project-snippet.policy.ts).
  | 'read_snippet'
  | 'create_snippet'
  | 'admin_snippet'
  // Merge requests (issue 30): ProjectPolicy 15.2's merge request abilities.
  | 'read_merge_request'
  | 'create_merge_request_in'
  | 'create_merge_request_from'
  | 'admin_merge_request'
  | 'update_merge_request'
  | 'destroy_merge_request'
  | 'fork_project'
  | 'read_release'
  | 'create_release'
  | 'update_release'
  | 'destroy_release'
  | 'read_package'
  | 'create_package'
  | 'destroy_package'
  // Project wikis (ProjectPolicy 15.2): read with the project, written by Developers, pages
  // removed by Maintainers; the wiki feature (wiki_access_level) gates all three.
  | 'read_wiki'
  | 'create_wiki'
  | 'admin_wiki'
  | 'read_environment'
  | 'create_environment'
  | 'update_environment'
  | 'destroy_environment'
  | 'stop_environment'
  | 'read_deployment'
  | 'create_deployment'
  | 'update_deployment'
  // Statistics (issue 32, item 7): ProjectPolicy 15.2's read_statistics and daily_statistics (Reporter).
  | 'read_statistics';

interface Rule {
  /** Lowest member access level that grants the action. */
  minLevel: number;
  /** Granted to anyone who can see the project by its visibility (public/internal). */
  byVisibility: boolean;
  /** Withheld while the project is archived (archived projects are read-only). */
  blockedWhenArchived: boolean;
  /**
   * The project feature the action belongs to (ProjectFeature): 'disabled' withholds it from
   * everyone, administrators included; 'private' from everyone but members and administrators.
   */
  feature?: 'issues' | 'snippets' | 'repository' | 'merge_requests' | 'wiki' | 'forking';
}

export const PROJECT_RULES: Record<ProjectAction, Rule> = {
  read_project: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  read_members: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  // Guests of a private project may not read its code; everyone may on public/internal ones. Both
  // follow the repository feature (ProjectPolicy 15.2: `repository_disabled` prevents them).
  download_code: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false, feature: 'repository' },
  // Builds are public on public/internal projects by default (public_builds); Reporter otherwise.
  read_build: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false },
  push_code: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true, feature: 'repository' },
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
  // Issues (ProjectPolicy 15.2): readable with the project; signed-in readers of a public or
  // internal project may open issues without being members (byVisibility; anonymous callers never
  // reach a write). Triage — labels, milestones, assignees of others' issues, boards — is
  // Reporter's; removing an issue is the Owner's.
  read_issue: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false, feature: 'issues' },
  create_issue: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: true, feature: 'issues' },
  admin_issue: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: true, feature: 'issues' },
  read_confidential_issues: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: false, feature: 'issues' },
  destroy_issue: { minLevel: ACCESS_LEVELS.owner, byVisibility: false, blockedWhenArchived: false, feature: 'issues' },
  read_issue_board: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false, feature: 'issues' },
  admin_issue_board: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: true, feature: 'issues' },
  read_label: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  admin_label: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: true },
  read_milestone: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  admin_milestone: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: true },
  // Notes: readers of the noteable may read its notes; signed-in readers may comment (the noteable's
  // own policy, e.g. a confidential issue or a locked discussion, is asked as well); editing
  // others' notes is the Maintainer's.
  read_note: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  create_note: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: true },
  admin_note: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: true },
  award_emoji: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: true },
  // Snippets: readable with the project (each snippet's own visibility is asked as well); Reporters
  // write them (create_snippet), Maintainers change anyone's (admin_snippet).
  read_snippet: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false, feature: 'snippets' },
  create_snippet: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: true, feature: 'snippets' },
  admin_snippet: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: true, feature: 'snippets' },
  // Merge requests: Guests of a private project do not see its code, so not its merge requests
  // either (read_merge_request goes with download_code); readers by visibility of a public or
  // internal project see them and, signed in, may open one into it (create_merge_request_in);
  // opening one from a branch of the project is pushing to it (create_merge_request_from,
  // Developer), as are updating and merging anyone's (admin_merge_request, update_merge_request);
  // removing one is the Owner's.
  read_merge_request: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false, feature: 'merge_requests' },
  create_merge_request_in: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: true, feature: 'merge_requests' },
  create_merge_request_from: {
    minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true, feature: 'merge_requests',
  },
  admin_merge_request: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true, feature: 'merge_requests' },
  update_merge_request: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true, feature: 'merge_requests' },
  destroy_merge_request: { minLevel: ACCESS_LEVELS.owner, byVisibility: false, blockedWhenArchived: false, feature: 'merge_requests' },
  // Releases (ProjectPolicy 15.2): readable with the project (guests of a private project too;
  // the entity hides the tag, commit and sources from those without download_code); Developers
  // create, update and delete them.
  // Forking (ProjectPolicy 15.2): whoever may read the code may fork it (`can?(:download_code)`
  // enables fork_project), while the forking feature allows it.
  fork_project: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false, feature: 'forking' },
  read_release: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false },
  create_release: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  update_release: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  destroy_release: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  // The package registry (ProjectPolicy 15.2): Reporters of a private project pull, everyone who
  // sees a public or internal one; Developers publish; Maintainers delete. A project with
  // packages_enabled off withholds all three (packages/package-access.ts asks that first).
  read_package: { minLevel: ACCESS_LEVELS.reporter, byVisibility: true, blockedWhenArchived: false },
  create_package: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  destroy_package: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: true },
  // Wikis: an archived project's wiki is read-only (ProjectPolicy's readonly_features include the wiki).
  read_wiki: { minLevel: ACCESS_LEVELS.guest, byVisibility: true, blockedWhenArchived: false, feature: 'wiki' },
  create_wiki: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true, feature: 'wiki' },
  admin_wiki: { minLevel: ACCESS_LEVELS.maintainer, byVisibility: false, blockedWhenArchived: true, feature: 'wiki' },
  // Environments and deployments (ProjectPolicy 15.2): Reporters read them, Developers create,
  // change, stop and remove environments and create and update deployments (EnvironmentPolicy
  // adds that only a stopped environment may be removed: environment-actions.ts).
  read_environment: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: false },
  create_environment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  update_environment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  destroy_environment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  stop_environment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  read_deployment: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: false },
  create_deployment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  update_deployment: { minLevel: ACCESS_LEVELS.developer, byVisibility: false, blockedWhenArchived: true },
  read_statistics: { minLevel: ACCESS_LEVELS.reporter, byVisibility: false, blockedWhenArchived: false },
};

// ProjectFeature levels (domain/projects/project-attributes.ts FEATURE_LEVELS), here to keep permissions free of projects.
const FEATURE_DISABLED = 0;
const FEATURE_PRIVATE = 10;
const FEATURE_ENABLED = 20;

export interface ProjectSubject {
  visibility_level: number;
  archived: number | boolean;
  /** "Public pipelines" (default on); absent counts as on. */
  public_builds?: number | boolean;
  /** ProjectFeature level of issues (0 disabled, 10 private, 20 enabled); absent counts as enabled. */
  issues_access_level?: number;
  /** ProjectFeature level of snippets, as issues_access_level. */
  snippets_access_level?: number;
  /** ProjectFeature level of the repository, as issues_access_level. */
  repository_access_level?: number;
  /** ProjectFeature level of merge requests, as issues_access_level. */
  merge_requests_access_level?: number;
  /** ProjectFeature level of the wiki, as issues_access_level. */
  wiki_access_level?: number;
  /** ProjectFeature level of forking, as issues_access_level. */
  forking_access_level?: number;
}

export function canOnProject(actor: Actor, action: ProjectAction, project: ProjectSubject): boolean {
  const rule = PROJECT_RULES[action];
  if (rule.blockedWhenArchived && project.archived) return false;
  if (rule.feature) {
    const level = project[`${rule.feature}_access_level`] ?? FEATURE_ENABLED;
    if (level <= FEATURE_DISABLED) return false;
    if (level <= FEATURE_PRIVATE && !actor.user?.admin && actor.accessLevel < ACCESS_LEVELS.guest) return false;
  }
  if (actor.user?.admin) return true;
  if (actor.accessLevel >= rule.minLevel) return true;
  // Jobs are readable by visibility only while the project keeps "Public pipelines" on (reference §3.1).
  if (action === 'read_build' && project.public_builds !== undefined && !project.public_builds) return false;
  return rule.byVisibility && visibleWithoutMembership(actor, project.visibility_level);
}
