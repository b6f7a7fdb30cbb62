/**
 * The project attributes of migration 2026-11-26T1800_project_attributes, merged into
 * ProjectsTable (domain/projects/project-attributes.ts declares their values and rules).
 */
import type { Generated } from 'kysely';
import type { Flag } from '../types.ts';

declare module './projects.ts' {
  interface ProjectsTable {
    /** ProjectFeature levels: 0 disabled, 10 private, 20 enabled, 30 public (Pages only). */
    issues_access_level: Generated<number>;
    repository_access_level: Generated<number>;
    merge_requests_access_level: Generated<number>;
    forking_access_level: Generated<number>;
    wiki_access_level: Generated<number>;
    builds_access_level: Generated<number>;
    snippets_access_level: Generated<number>;
    pages_access_level: Generated<number>;
    operations_access_level: Generated<number>;
    analytics_access_level: Generated<number>;
    container_registry_access_level: Generated<number>;
    security_and_compliance_access_level: Generated<number>;
    releases_access_level: Generated<number>;
    emails_disabled: Generated<Flag>;
    show_default_award_emojis: Generated<Flag>;
    show_diff_preview_in_email: Generated<Flag>;
    warn_about_potentially_unwanted_characters: Generated<Flag>;
    enforce_auth_checks_on_uploads: Generated<Flag>;
    shared_runners_enabled: Generated<Flag>;
    resolve_outdated_diff_discussions: Generated<Flag>;
    remove_source_branch_after_merge: Generated<Flag>;
    lfs_enabled: Generated<Flag>;
    request_access_enabled: Generated<Flag>;
    only_allow_merge_if_pipeline_succeeds: Generated<Flag>;
    allow_merge_on_skipped_pipeline: Generated<Flag>;
    only_allow_merge_if_all_discussions_are_resolved: Generated<Flag>;
    printing_merge_request_link_enabled: Generated<Flag>;
    auto_devops_enabled: Generated<Flag>;
    autoclose_referenced_issues: Generated<Flag>;
    packages_enabled: Generated<Flag>;
    service_desk_enabled: Generated<Flag>;
    keep_latest_artifact: Generated<Flag>;
    mr_default_target_self: Generated<Flag>;
    ci_forward_deployment_enabled: Generated<Flag>;
    ci_allow_fork_pipelines_to_run_in_parent_project: Generated<Flag>;
    ci_separated_caches: Generated<Flag>;
    restrict_user_defined_variables: Generated<Flag>;
    build_timeout: Generated<number>;
    ci_default_git_depth: Generated<number>;
    build_git_strategy: Generated<string>;
    auto_cancel_pending_pipelines: Generated<string>;
    ci_config_path: string | null;
    merge_method: Generated<string>;
    squash_option: Generated<string>;
    suggestion_commit_message: string | null;
    merge_commit_template: string | null;
    squash_commit_template: string | null;
    auto_devops_deploy_strategy: Generated<string>;
    /** JSON array of topic names. */
    topics: Generated<string>;
    /** JSON of ContainerExpirationPolicy's attributes, or null for the defaults. */
    container_expiration_policy: string | null;
  }
}
