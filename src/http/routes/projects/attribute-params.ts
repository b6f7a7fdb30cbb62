/**
 * The project attributes POST and PUT /projects take (the Service 15.2's optional_project_params
 * and optional_update_params, lib/api/helpers/projects_helpers.rb), with their Grape types; the
 * models' checks are domain/projects/project-attributes.ts's.
 */
import { CHOICES, LEVEL_NAMES, PAGES_LEVEL_NAMES, TEXTS } from '../../../domain/projects/project-attributes.ts';
import { invalidParams } from '../../errors.ts';
import { P } from '../../input/params.ts';

const flag = (description?: string) => P.optional(P.boolean(description ? { description } : {}));
const level = () => P.optional(P.oneOf(LEVEL_NAMES));
const choice = <K extends keyof typeof CHOICES>(name: K) => P.optional(P.oneOf(CHOICES[name]));
const text = (name: keyof typeof TEXTS) => P.optional(P.string({ maxLength: TEXTS[name] }));
const topics = (description: string) => P.optional(P.array(P.name(), { commaSeparated: true, description }));

export const projectAttributeParams = {
  issues_enabled: flag('deprecated: issues_access_level'),
  merge_requests_enabled: flag('deprecated: merge_requests_access_level'),
  wiki_enabled: flag('deprecated: wiki_access_level'),
  jobs_enabled: flag('deprecated: builds_access_level'),
  snippets_enabled: flag('deprecated: snippets_access_level'),
  container_registry_enabled: flag('deprecated: container_registry_access_level'),
  issues_access_level: level(),
  repository_access_level: level(),
  merge_requests_access_level: level(),
  forking_access_level: level(),
  wiki_access_level: level(),
  builds_access_level: level(),
  snippets_access_level: level(),
  pages_access_level: P.optional(P.oneOf(PAGES_LEVEL_NAMES)),
  operations_access_level: level(),
  analytics_access_level: level(),
  container_registry_access_level: level(),
  security_and_compliance_access_level: level(),
  releases_access_level: level(),
  emails_disabled: flag(),
  show_default_award_emojis: flag(),
  show_diff_preview_in_email: flag(),
  warn_about_potentially_unwanted_characters: flag(),
  enforce_auth_checks_on_uploads: flag(),
  shared_runners_enabled: flag('instance runners take the project\'s jobs'),
  resolve_outdated_diff_discussions: flag(),
  remove_source_branch_after_merge: flag(),
  lfs_enabled: flag(),
  request_access_enabled: flag(),
  only_allow_merge_if_pipeline_succeeds: flag(),
  allow_merge_on_skipped_pipeline: flag(),
  only_allow_merge_if_all_discussions_are_resolved: flag(),
  printing_merge_request_link_enabled: flag(),
  auto_devops_enabled: flag(),
  autoclose_referenced_issues: flag(),
  packages_enabled: flag(),
  service_desk_enabled: flag(),
  keep_latest_artifact: flag(),
  mr_default_target_self: flag(),
  build_git_strategy: choice('build_git_strategy'),
  auto_cancel_pending_pipelines: choice('auto_cancel_pending_pipelines'),
  merge_method: choice('merge_method'),
  squash_option: choice('squash_option'),
  auto_devops_deploy_strategy: choice('auto_devops_deploy_strategy'),
  ci_config_path: text('ci_config_path'),
  suggestion_commit_message: text('suggestion_commit_message'),
  merge_commit_template: text('merge_commit_template'),
  squash_commit_template: text('squash_commit_template'),
  build_timeout: P.optional(P.integer({ description: 'seconds a job may run unless it sets timeout: (600 to one month)' })),
  ci_default_git_depth: P.optional(P.integer({ description: 'the clone depth runners use (0 to 1000)' })),
  topics: topics('the project\'s topics'),
  tag_list: topics('deprecated: topics'),
  container_expiration_policy_attributes: P.optional(P.object({
    cadence: P.optional(P.name()),
    keep_n: P.optional(P.integer()),
    older_than: P.optional(P.name()),
    name_regex: P.optional(P.name()),
    name_regex_keep: P.optional(P.name()),
    enabled: P.optional(P.boolean()),
  })),
  repository_storage: P.optional(P.name({ description: 'administrators: the shard of a new repository, or where to move it' })),
};

/** PUT only (optional_update_params_ce). */
export const projectUpdateOnlyParams = {
  ci_forward_deployment_enabled: flag(),
  ci_allow_fork_pipelines_to_run_in_parent_project: flag(),
  ci_separated_caches: flag(),
  restrict_user_defined_variables: flag(),
};

export const ATTRIBUTE_NAMES = Object.keys(projectAttributeParams);
export const UPDATE_ONLY_NAMES = Object.keys(projectUpdateOnlyParams);

const NULLABLE = new Set([
  'ci_config_path', 'suggestion_commit_message', 'merge_commit_template', 'squash_commit_template', 'topics', 'tag_list',
]);

/** An empty value (Grape's nil) is refused for what has no "none": flags, levels, words, numbers. */
export function refuseNils(input: Record<string, unknown>): void {
  const nils = [...ATTRIBUTE_NAMES, ...UPDATE_ONLY_NAMES].filter((name) => input[name] === null && !NULLABLE.has(name));
  if (nils.length > 0) throw invalidParams(nils.map((name) => `${name} is invalid`));
}
