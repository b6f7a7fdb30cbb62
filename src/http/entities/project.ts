/**
 * The project entities of the Service 15.2 (lib/api/entities/project_identity.rb,
 * basic_project_details.rb, project.rb, project_with_access.rb; issue 35, item 4):
 * ProjectIdentity → BasicProjectDetails → Project → ProjectWithAccess. Which one a route answers
 * is the route's choice, as the Service's API chooses it: signed-in readers of GET /projects and
 * GET /projects/:id get ProjectWithAccess, anonymous ones (and `simple=true`) BasicProjectDetails,
 * writes answer Project. `namespace` is the NamespaceBasic of the Service.
 *
 * Fields for what kiln lacks (issues, merge requests, wikis, the container registry, imports,
 * forks, stars, sharing with groups) carry the values the Service gives a new project on a
 * default instance: its default settings, zero counts, empty lists (PROJECT_SETTINGS below).
 * Where a default would claim something kiln does not do, the field says what kiln does instead,
 * each with its reason there.
 */
import { Type, type Static } from 'typebox';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { NamespaceRow } from '../../db/types.ts';
import { isoMillis } from '../../domain/clock.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { flat } from './serializers.ts';
import { presentUserBasic, UserBasicSchema, type UserBasicRow } from './user.ts';
import { presentProjectAttributes, projectTopics } from './project-attributes.ts';

const NString = Type.Union([Type.String(), Type.Null()]);
const NInteger = Type.Union([Type.Integer(), Type.Null()]);

export const NamespaceBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path: Type.String(),
  kind: Type.String(),
  full_path: Type.String(),
  parent_id: NInteger,
  avatar_url: NString,
  web_url: Type.String(),
}, { title: 'NamespaceBasic' });

export const ProjectIdentitySchema = Type.Object({
  id: Type.Integer(),
  description: NString,
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
}, { title: 'ProjectIdentity' });

export const BasicProjectDetailsSchema = Type.Object({
  ...ProjectIdentitySchema.properties,
  /** Only for those who may read the code (download_code). */
  default_branch: Type.Optional(NString),
  tag_list: Type.Array(Type.String()),
  topics: Type.Array(Type.String()),
  ssh_url_to_repo: Type.String(),
  http_url_to_repo: Type.String(),
  web_url: Type.String(),
  readme_url: NString,
  forks_count: Type.Integer(),
  avatar_url: NString,
  star_count: Type.Integer(),
  last_activity_at: Type.String(),
  namespace: NamespaceBasicSchema,
}, { title: 'BasicProjectDetails' });

/** The Service's MemberAccess (ProjectAccess, GroupAccess): a level and the member's notification level. */
export const MemberAccessSchema = Type.Object({
  access_level: Type.Integer(),
  notification_level: NInteger,
}, { title: 'MemberAccess' });

export const ContainerExpirationPolicySchema = Type.Object({
  cadence: Type.String(),
  enabled: Type.Boolean(),
  keep_n: NInteger,
  older_than: NString,
  name_regex: NString,
  name_regex_keep: NString,
  next_run_at: NString,
}, { title: 'ContainerExpirationPolicy' });

/** A group a project or group is shared with (the Service's SharedGroupWithProject / …WithGroup). */
export const SharedWithGroupSchema = Type.Object({
  group_id: Type.Integer(),
  group_name: Type.String(),
  group_full_path: Type.String(),
  group_access_level: Type.Integer(),
  expires_at: NString,
}, { title: 'SharedWithGroup' });

const AccessLevelString = Type.String({ description: 'disabled, private, enabled (or public for pages)' });

export const ProjectSchema = Type.Object({
  ...BasicProjectDetailsSchema.properties,
  _links: Type.Object({
    self: Type.String(),
    issues: Type.String(),
    merge_requests: Type.String(),
    repo_branches: Type.String(),
    labels: Type.String(),
    events: Type.String(),
    members: Type.String(),
  }),
  packages_enabled: Type.Boolean(),
  empty_repo: Type.Boolean(),
  archived: Type.Boolean(),
  visibility: Type.String(),
  /** The namespace's owner, for projects in a user's namespace. */
  owner: Type.Optional(UserBasicSchema),
  resolve_outdated_diff_discussions: Type.Boolean(),
  container_expiration_policy: ContainerExpirationPolicySchema,
  issues_enabled: Type.Boolean(),
  merge_requests_enabled: Type.Boolean(),
  wiki_enabled: Type.Boolean(),
  jobs_enabled: Type.Boolean(),
  snippets_enabled: Type.Boolean(),
  container_registry_enabled: Type.Boolean(),
  service_desk_enabled: Type.Boolean(),
  service_desk_address: NString,
  can_create_merge_request_in: Type.Boolean(),
  issues_access_level: AccessLevelString,
  repository_access_level: AccessLevelString,
  merge_requests_access_level: AccessLevelString,
  forking_access_level: AccessLevelString,
  wiki_access_level: AccessLevelString,
  builds_access_level: AccessLevelString,
  snippets_access_level: AccessLevelString,
  pages_access_level: AccessLevelString,
  operations_access_level: AccessLevelString,
  analytics_access_level: AccessLevelString,
  container_registry_access_level: AccessLevelString,
  security_and_compliance_access_level: AccessLevelString,
  emails_disabled: Type.Union([Type.Boolean(), Type.Null()]),
  shared_runners_enabled: Type.Boolean(),
  group_runners_enabled: Type.Boolean(),
  lfs_enabled: Type.Boolean(),
  creator_id: NInteger,
  /** The source of a fork, for those who may read it. */
  forked_from_project: Type.Optional(BasicProjectDetailsSchema),
  import_status: Type.String(),
  /** The next three for those who may administer the project, on the routes that say so. */
  import_error: Type.Optional(NString),
  open_issues_count: Type.Optional(Type.Integer()),
  runners_token: Type.Optional(NString),
  ci_default_git_depth: Type.Integer(),
  ci_forward_deployment_enabled: Type.Boolean(),
  ci_job_token_scope_enabled: Type.Boolean(),
  ci_separated_caches: Type.Boolean(),
  /** The Service exposes public_builds under this name. */
  public_jobs: Type.Boolean(),
  build_git_strategy: Type.Optional(Type.String()),
  build_timeout: Type.Integer(),
  auto_cancel_pending_pipelines: Type.String(),
  /** Only for those who may read the code (download_code). */
  ci_config_path: Type.Optional(NString),
  shared_with_groups: Type.Array(SharedWithGroupSchema),
  only_allow_merge_if_pipeline_succeeds: Type.Boolean(),
  allow_merge_on_skipped_pipeline: Type.Boolean(),
  restrict_user_defined_variables: Type.Boolean(),
  request_access_enabled: Type.Boolean(),
  only_allow_merge_if_all_discussions_are_resolved: Type.Boolean(),
  remove_source_branch_after_merge: Type.Boolean(),
  printing_merge_request_link_enabled: Type.Boolean(),
  merge_method: Type.String(),
  squash_option: Type.String(),
  suggestion_commit_message: NString,
  merge_commit_template: NString,
  squash_commit_template: NString,
  /** `statistics=true`, for those who may read them (read_statistics: Reporter). */
  statistics: Type.Optional(Type.Object({
    commit_count: Type.Integer(), storage_size: Type.Integer(), repository_size: Type.Integer(), wiki_size: Type.Integer(),
    lfs_objects_size: Type.Integer(), job_artifacts_size: Type.Integer(), pipeline_artifacts_size: Type.Integer(),
    packages_size: Type.Integer(), snippets_size: Type.Integer(), uploads_size: Type.Integer(),
  }, { title: 'ProjectStatistics' })),
  auto_devops_enabled: Type.Boolean(),
  auto_devops_deploy_strategy: Type.String(),
  autoclose_referenced_issues: Type.Boolean(),
  /** Administrators only (change_repository_storage). */
  repository_storage: Type.Optional(Type.String()),
  keep_latest_artifact: Type.Boolean(),
  updated_at: Type.String(),
}, { title: 'Project' });

export const ProjectWithAccessSchema = Type.Object({
  ...ProjectSchema.properties,
  permissions: Type.Object({
    project_access: Type.Union([MemberAccessSchema, Type.Null()]),
    group_access: Type.Union([MemberAccessSchema, Type.Null()]),
  }),
}, { title: 'ProjectWithAccess' });

export type ProjectIdentity = Static<typeof ProjectIdentitySchema>;
export type BasicProjectDetails = Static<typeof BasicProjectDetailsSchema>;
export type Project = Static<typeof ProjectSchema>;
export type ProjectWithAccess = Static<typeof ProjectWithAccessSchema>;
export type NamespaceBasic = Static<typeof NamespaceBasicSchema>;
export type SharedWithGroup = Static<typeof SharedWithGroupSchema>;
export type MemberAccess = Static<typeof MemberAccessSchema>;
export interface ProjectPermissions { project_access: MemberAccess | null; group_access: MemberAccess | null }

/** The Service's ci_default_git_depth for a new project (ProjectCiCdSetting::DEFAULT_GIT_DEPTH); runners clone this deep. */
export const DEFAULT_GIT_DEPTH = 20;

/**
 * What the Service 15.2 gives a new project on a default instance, for the settings kiln does not
 * keep per project (yet): access levels `enabled` (the default_projects_features), the merge
 * settings of Project's column defaults, the CI/CD settings' defaults.
 */
const PROJECT_SETTINGS = {
  packages_enabled: true,
  resolve_outdated_diff_discussions: false,
  service_desk_enabled: false,
  service_desk_address: null,
  emails_disabled: null,
  shared_runners_enabled: true,
  group_runners_enabled: true,
  // A project's LFS follows the instance's, and kiln serves no LFS (the Service with LFS off: false).
  lfs_enabled: false,
  import_status: 'none',
  ci_forward_deployment_enabled: true,
  ci_job_token_scope_enabled: false,
  ci_separated_caches: true,
  build_timeout: 3600,
  auto_cancel_pending_pipelines: 'enabled',
  only_allow_merge_if_pipeline_succeeds: false,
  allow_merge_on_skipped_pipeline: false,
  restrict_user_defined_variables: false,
  request_access_enabled: true,
  only_allow_merge_if_all_discussions_are_resolved: false,
  remove_source_branch_after_merge: true,
  printing_merge_request_link_enabled: true,
  merge_method: 'merge',
  squash_option: 'default_off',
  suggestion_commit_message: null,
  merge_commit_template: null,
  squash_commit_template: null,
  // Follows the instance's Auto DevOps setting; kiln runs no Auto DevOps pipeline for a project
  // without a configuration (the Service with it off: false).
  auto_devops_enabled: false,
  auto_devops_deploy_strategy: 'continuous',
  autoclose_referenced_issues: true,
  // kiln keeps no "latest artifacts" of a ref past their expiry (README, Compatibility).
  keep_latest_artifact: false,
} as const;

/** A fetch strategy the Service derives from build_allow_git_fetch (default true). */
const BUILD_GIT_STRATEGY = 'fetch';

/** A project's namespace with its full path and name, resolved by the route. */
export interface NamespaceInfo {
  namespace: NamespaceRow;
  fullPath: string;
  fullName: string;
}

export function presentNamespaceBasic(info: NamespaceInfo, externalUrl: string): NamespaceBasic {
  const ns = info.namespace;
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: info.fullPath,
    parent_id: ns.parent_id,
    avatar_url: null,
    web_url: ns.kind === 'group' ? flat(externalUrl, '/groups/', info.fullPath) : flat(externalUrl, '/', info.fullPath),
  };
}

export function presentProjectIdentity(p: ProjectRow, ns: NamespaceInfo): ProjectIdentity {
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: flat(ns.fullName, ' / ', p.name),
    path: p.path,
    path_with_namespace: flat(ns.fullPath, '/', p.path),
    created_at: p.created_at,
  };
}

/**
 * ssh_url_to_repo: `git@host:path.git` on port 22, `ssh://git@host:port/path.git` on another
 * (the Service's Gitlab.config.gitlab_shell.ssh_path_prefix), the host being KILN_EXTERNAL_URL's.
 */
export function sshUrlToRepo(externalUrl: string, sshPort: number | undefined, fullPath: string): string {
  const host = new URL(externalUrl).hostname;
  if (sshPort === undefined || sshPort === 22 || sshPort === 0) return flat('git@', host, ':', fullPath, '.git');
  return flat('ssh://git@', host.includes(':') ? `[${host}]` : host, ':', String(sshPort), '/', fullPath, '.git');
}

/** What the viewer may see of a project, decided by the route or the list loader. */
export interface ProjectView {
  externalUrl: string;
  /** KILN_SSH_PORT: where ssh_url_to_repo points (22 or absent: the scp-like form). */
  sshPort?: number;
  /** download_code: default_branch and ci_config_path. */
  readCode: boolean;
  /** create_merge_request_in: a signed-in reader (members, or anyone signed in on a public or internal project). */
  createMergeRequestIn: boolean;
  /** change_repository_storage: administrators see the shard. */
  admin: boolean;
  /** The namespace's owner, for a project in a user's namespace (UserBasic). */
  owner: UserBasicRow | null;
  /** How many users starred the project. */
  starCount: number;
  /** How many projects were forked from it (forks_count). */
  forksCount?: number;
  /** A fork's source as BasicProjectDetails, when the viewer may read it. */
  forkedFrom?: BasicProjectDetails;
  /** The groups the project is shared with (ProjectGroupLink). */
  sharedWithGroups?: SharedWithGroup[];
  /**
   * open_issues_count, where the issues feature is available to the viewer: every open issue for
   * those who may read confidential ones, the others' count otherwise (Projects::OpenIssuesCountService).
   */
  openIssuesCount?: number;
  /**
   * user_can_admin_project: set by the routes that pass it to the Service's entity (show, create,
   * update) for a viewer who may administer the project (Maintainer and up, administrators).
   */
  administered?: { runnersToken: string | null };
}

export function presentBasicProjectDetails(
  p: ProjectRow, ns: NamespaceInfo, view: Pick<ProjectView, 'externalUrl' | 'readCode' | 'starCount' | 'sshPort' | 'forksCount'>,
): BasicProjectDetails {
  const fullPath = flat(ns.fullPath, '/', p.path);
  const webUrl = flat(view.externalUrl, '/', fullPath);
  const entity = presentProjectIdentity(p, ns) as BasicProjectDetails;
  if (view.readCode) entity.default_branch = p.default_branch;
  const topics = projectTopics(p);
  entity.tag_list = topics;
  entity.topics = topics;
  entity.ssh_url_to_repo = sshUrlToRepo(view.externalUrl, view.sshPort, fullPath);
  entity.http_url_to_repo = flat(webUrl, '.git');
  entity.web_url = webUrl;
  entity.readme_url = p.readme_path && p.default_branch ? flat(webUrl, '/-/blob/', p.default_branch, '/', p.readme_path) : null;
  entity.forks_count = view.forksCount ?? 0;
  entity.avatar_url = null;
  entity.star_count = view.starCount;
  entity.last_activity_at = p.last_activity_at;
  entity.namespace = presentNamespaceBasic(ns, view.externalUrl);
  return entity;
}

/** next_run_at of the policy every new project gets: saved at creation, due one cadence (1d) later. */
function policyNextRunAt(createdAt: string): string {
  return new Date(isoMillis(createdAt) + 86_400_000).toISOString();
}

/**
 * Project: BasicProjectDetails's object with the rest added in the Service's order, each field
 * that does not apply (Grape's `if:`) left out rather than sent as null. Added one by one, not
 * spread or deleted: a list presents twenty of these, and an object that lost a property (or a
 * spread of one) is several times slower to make and to write.
 */
export function presentProject(p: ProjectRow, ns: NamespaceInfo, view: ProjectView): Project {
  const e = presentBasicProjectDetails(p, ns, view) as Project;
  const api = flat(view.externalUrl, '/api/v4/projects/', p.id);
  const s = PROJECT_SETTINGS;
  e._links = {
    self: api,
    issues: flat(api, '/issues'),
    merge_requests: flat(api, '/merge_requests'),
    repo_branches: flat(api, '/repository/branches'),
    labels: flat(api, '/labels'),
    events: flat(api, '/events'),
    members: flat(api, '/members'),
  };
  e.packages_enabled = s.packages_enabled;
  e.empty_repo = p.empty_repo === 1;
  e.archived = p.archived === 1;
  e.visibility = visibilityName(p.visibility_level);
  if (view.owner) e.owner = presentUserBasic(view.owner, {}, { externalUrl: view.externalUrl, canReadProfile: false });
  e.resolve_outdated_diff_discussions = s.resolve_outdated_diff_discussions;
  e.container_expiration_policy = {
    cadence: '1d', enabled: false, keep_n: 10, older_than: '90d', name_regex: null, name_regex_keep: null,
    next_run_at: policyNextRunAt(p.created_at),
  };
  e.issues_enabled = true;
  e.merge_requests_enabled = true;
  e.wiki_enabled = true;
  e.jobs_enabled = true;
  e.snippets_enabled = true;
  e.container_registry_enabled = true;
  e.service_desk_enabled = s.service_desk_enabled;
  e.service_desk_address = s.service_desk_address;
  e.can_create_merge_request_in = view.createMergeRequestIn;
  e.issues_access_level = 'enabled';
  e.repository_access_level = 'enabled';
  e.merge_requests_access_level = 'enabled';
  e.forking_access_level = 'enabled';
  e.wiki_access_level = 'enabled';
  e.builds_access_level = 'enabled';
  e.snippets_access_level = 'enabled';
  // The Service's default: public projects' pages for everyone, others' for members.
  e.pages_access_level = p.visibility_level >= 20 ? 'enabled' : 'private';
  e.operations_access_level = 'enabled';
  e.analytics_access_level = 'enabled';
  e.container_registry_access_level = 'enabled';
  // The Service's default for a new project: members only.
  e.security_and_compliance_access_level = 'private';
  e.emails_disabled = s.emails_disabled;
  e.shared_runners_enabled = s.shared_runners_enabled;
  e.group_runners_enabled = s.group_runners_enabled;
  e.lfs_enabled = s.lfs_enabled;
  e.creator_id = p.creator_id;
  if (view.forkedFrom) e.forked_from_project = view.forkedFrom;
  // A fork's repository is made by a job (domain/forks/fork-project.ts): scheduled … finished.
  e.import_status = p.import_status ?? s.import_status;
  if (view.administered) e.import_error = p.import_error ?? null;
  if (view.openIssuesCount !== undefined) e.open_issues_count = view.openIssuesCount;
  if (view.administered) e.runners_token = view.administered.runnersToken;
  e.ci_default_git_depth = DEFAULT_GIT_DEPTH;
  e.ci_forward_deployment_enabled = s.ci_forward_deployment_enabled;
  e.ci_job_token_scope_enabled = s.ci_job_token_scope_enabled;
  e.ci_separated_caches = s.ci_separated_caches;
  e.public_jobs = p.public_builds !== 0;
  if (view.administered) e.build_git_strategy = BUILD_GIT_STRATEGY;
  e.build_timeout = s.build_timeout;
  e.auto_cancel_pending_pipelines = s.auto_cancel_pending_pipelines;
  // The Service's column stays null until set; pipelines then read .gitlab-ci.yml.
  if (view.readCode) e.ci_config_path = null;
  e.shared_with_groups = view.sharedWithGroups ?? [];
  e.only_allow_merge_if_pipeline_succeeds = s.only_allow_merge_if_pipeline_succeeds;
  e.allow_merge_on_skipped_pipeline = s.allow_merge_on_skipped_pipeline;
  e.restrict_user_defined_variables = s.restrict_user_defined_variables;
  e.request_access_enabled = s.request_access_enabled;
  e.only_allow_merge_if_all_discussions_are_resolved = s.only_allow_merge_if_all_discussions_are_resolved;
  e.remove_source_branch_after_merge = s.remove_source_branch_after_merge;
  e.printing_merge_request_link_enabled = s.printing_merge_request_link_enabled;
  e.merge_method = s.merge_method;
  e.squash_option = s.squash_option;
  e.suggestion_commit_message = s.suggestion_commit_message;
  e.merge_commit_template = s.merge_commit_template;
  e.squash_commit_template = s.squash_commit_template;
  e.auto_devops_enabled = s.auto_devops_enabled;
  e.auto_devops_deploy_strategy = s.auto_devops_deploy_strategy;
  e.autoclose_referenced_issues = s.autoclose_referenced_issues;
  if (view.admin) e.repository_storage = p.repository_storage;
  e.keep_latest_artifact = s.keep_latest_artifact;
  e.updated_at = p.updated_at;
  overlayStoredAttributes(e, p);
  return e;
}

/**
 * The attributes a project stores (project-attributes.ts, issue 35 item 8) in place of the
 * defaults above: only where the entity already has the field, so that its order and the fields
 * a viewer may not see (Grape's `if:`) stay as presentProject decided. The container expiration
 * policy keeps its computed next run.
 */
/** Answered as what kiln does whatever was stored: it serves no LFS and keeps no latest artifacts of a ref. */
const NOT_STORED = new Set(['lfs_enabled', 'keep_latest_artifact']);

function overlayStoredAttributes(e: Project, p: ProjectRow): void {
  const stored = presentProjectAttributes(p) as Record<string, unknown>;
  const entity = e as unknown as Record<string, unknown>;
  for (const key in stored) {
    if (key === 'container_expiration_policy' || NOT_STORED.has(key) || !Object.hasOwn(entity, key)) continue;
    entity[key] = stored[key];
  }
  e.container_expiration_policy = { ...stored.container_expiration_policy as Project['container_expiration_policy'],
    next_run_at: e.container_expiration_policy.next_run_at };
}

export function presentProjectWithAccess(
  p: ProjectRow, ns: NamespaceInfo, view: ProjectView, permissions: ProjectPermissions,
): ProjectWithAccess {
  const e = presentProject(p, ns, view) as ProjectWithAccess;
  e.permissions = permissions;
  return e;
}

/** The entity with its `statistics` where the Service exposes them: after squash_commit_template. */
export function withStatistics<E extends object>(entity: E, statistics: Project['statistics']): E {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entity)) {
    if (k === 'auto_devops_enabled') out.statistics = statistics;
    out[k] = v;
  }
  return out as E;
}
