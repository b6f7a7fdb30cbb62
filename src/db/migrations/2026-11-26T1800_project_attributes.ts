/**
 * The attributes a project holds in the Service 15.2 beyond those kiln had (issue 35, item 8):
 * feature access levels (ProjectFeature: 0 disabled, 10 private, 20 enabled, 30 public), merge
 * and CI settings, topics. Defaults are the Service's for a new project; existing public projects
 * get Pages `enabled` as a new public project would.
 */
import { sql, type Kysely } from 'kysely';

const LEVELS: [string, number][] = [
  ['issues_access_level', 20], ['repository_access_level', 20], ['merge_requests_access_level', 20], ['forking_access_level', 20],
  ['wiki_access_level', 20], ['builds_access_level', 20], ['snippets_access_level', 20], ['pages_access_level', 10],
  ['operations_access_level', 20], ['analytics_access_level', 20], ['container_registry_access_level', 0],
  ['security_and_compliance_access_level', 10], ['releases_access_level', 20],
];

const FLAGS: [string, number][] = [
  ['emails_disabled', 0], ['show_default_award_emojis', 1], ['show_diff_preview_in_email', 1], ['warn_about_potentially_unwanted_characters', 1],
  ['enforce_auth_checks_on_uploads', 1], ['shared_runners_enabled', 1], ['resolve_outdated_diff_discussions', 0],
  ['remove_source_branch_after_merge', 1], ['lfs_enabled', 1], ['request_access_enabled', 1], ['only_allow_merge_if_pipeline_succeeds', 0],
  ['allow_merge_on_skipped_pipeline', 0], ['only_allow_merge_if_all_discussions_are_resolved', 0], ['printing_merge_request_link_enabled', 1],
  ['auto_devops_enabled', 1], ['autoclose_referenced_issues', 1], ['packages_enabled', 1], ['service_desk_enabled', 0], ['keep_latest_artifact', 1],
  ['mr_default_target_self', 0], ['ci_forward_deployment_enabled', 1], ['ci_allow_fork_pipelines_to_run_in_parent_project', 1],
  ['ci_separated_caches', 1], ['restrict_user_defined_variables', 0],
];

const TEXTS: [string, string | null][] = [
  ['build_git_strategy', 'fetch'], ['auto_cancel_pending_pipelines', 'enabled'], ['ci_config_path', null], ['merge_method', 'merge'],
  ['squash_option', 'default_off'], ['suggestion_commit_message', null], ['merge_commit_template', null], ['squash_commit_template', null],
  ['auto_devops_deploy_strategy', 'continuous'],
];

const INTEGERS: [string, number][] = [['build_timeout', 3600], ['ci_default_git_depth', 20]];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, value] of [...LEVELS, ...FLAGS, ...INTEGERS]) {
    await db.schema.alterTable('projects').addColumn(name, 'integer', (c) => c.notNull().defaultTo(value)).execute();
  }
  for (const [name, value] of TEXTS) {
    await db.schema.alterTable('projects').addColumn(name, 'text', (c) => (value === null ? c : c.notNull().defaultTo(value))).execute();
  }
  // A JSON array of topic names, in the order given.
  await db.schema.alterTable('projects').addColumn('topics', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  // ContainerExpirationPolicy's attributes as JSON; null until set (the entity shows the defaults).
  await db.schema.alterTable('projects').addColumn('container_expiration_policy', 'text').execute();
  await sql`update projects set pages_access_level = 20 where visibility_level = 20`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of [...LEVELS, ...FLAGS, ...INTEGERS, ...TEXTS, ['topics'], ['container_expiration_policy']]) {
    await db.schema.alterTable('projects').dropColumn(name as string).execute();
  }
}
