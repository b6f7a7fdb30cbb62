/**
 * The attributes a project holds (the Service 15.2's optional_project_params and update params of
 * lib/api/helpers/projects_helpers.rb): feature access levels, the `*_enabled` booleans of API v4
 * that set them, merge and CI settings, topics and the container expiration policy. This file
 * turns given values into a row change, with the checks of the Service's Project, ProjectFeature,
 * ProjectCiCdSetting and ContainerExpirationPolicy models and their error keys.
 */
import type { Updateable } from 'kysely';
import type { ProjectsTable } from '../../db/tables/projects.ts';
import type {} from '../../db/tables/project-attributes.ts';
import type { Flag } from '../../db/types.ts';

/** ProjectFeature's levels. */
export const FEATURE_LEVELS = { disabled: 0, private: 10, enabled: 20, public: 30 } as const;
export type FeatureLevelName = keyof typeof FEATURE_LEVELS;
export const LEVEL_NAMES = ['disabled', 'private', 'enabled'] as const;
/** Pages alone may be public. */
export const PAGES_LEVEL_NAMES = ['disabled', 'private', 'enabled', 'public'] as const;

export const FEATURES = [
  'issues', 'repository', 'merge_requests', 'forking', 'wiki', 'builds', 'snippets', 'pages', 'operations', 'analytics',
  'container_registry', 'security_and_compliance', 'releases',
] as const;
export type Feature = (typeof FEATURES)[number];
export type AccessLevelAttribute = `${Feature}_access_level`;

/** The booleans API v4 keeps beside the levels (the Service plans to drop them in API v5): true is enabled, false disabled. */
export const ENABLED_FLAGS = {
  issues_enabled: 'issues', merge_requests_enabled: 'merge_requests', wiki_enabled: 'wiki', jobs_enabled: 'builds',
  snippets_enabled: 'snippets', container_registry_enabled: 'container_registry',
} as const satisfies Record<string, Feature>;

/** Boolean attributes taken on create and update. */
export const FLAGS = [
  'emails_disabled', 'show_default_award_emojis', 'show_diff_preview_in_email', 'warn_about_potentially_unwanted_characters',
  'enforce_auth_checks_on_uploads', 'shared_runners_enabled', 'resolve_outdated_diff_discussions', 'remove_source_branch_after_merge',
  'lfs_enabled', 'request_access_enabled', 'only_allow_merge_if_pipeline_succeeds', 'allow_merge_on_skipped_pipeline',
  'only_allow_merge_if_all_discussions_are_resolved', 'printing_merge_request_link_enabled', 'auto_devops_enabled',
  'autoclose_referenced_issues', 'packages_enabled', 'service_desk_enabled', 'keep_latest_artifact', 'mr_default_target_self',
] as const;
/** Boolean attributes PUT takes but POST does not (optional_update_params_ce). */
export const UPDATE_FLAGS = [
  'ci_forward_deployment_enabled', 'ci_allow_fork_pipelines_to_run_in_parent_project', 'ci_separated_caches',
  'restrict_user_defined_variables',
] as const;
export type FlagAttribute = (typeof FLAGS)[number] | (typeof UPDATE_FLAGS)[number];

/** Attributes limited to a list of words (Grape `values:`). */
export const CHOICES = {
  build_git_strategy: ['fetch', 'clone'],
  auto_cancel_pending_pipelines: ['disabled', 'enabled'],
  merge_method: ['ff', 'rebase_merge', 'merge'],
  squash_option: ['never', 'always', 'default_on', 'default_off'],
  auto_devops_deploy_strategy: ['continuous', 'manual', 'timed_incremental'],
} as const;
export type ChoiceAttribute = keyof typeof CHOICES;

/** Free texts and their models' length limits. */
export const TEXTS = {
  ci_config_path: 255,
  suggestion_commit_message: 255,
  merge_commit_template: 500,
  squash_commit_template: 500,
} as const;
export type TextAttribute = keyof typeof TEXTS;

/** Project::MAX_BUILD_TIMEOUT is 1.month: 30.436875 days. */
const BUILD_TIMEOUT_MIN = 600;
const BUILD_TIMEOUT_BELOW = 2_629_746;
/** ProjectCiCdSetting::MAX_GIT_DEPTH. */
const MAX_GIT_DEPTH = 1000;

/** ContainerExpirationPolicy's choices and the defaults of a policy never set. */
export const EXPIRATION_CHOICES = {
  cadence: ['1d', '7d', '14d', '1month', '3month'],
  keep_n: [1, 5, 10, 25, 50, 100],
  older_than: ['7d', '14d', '30d', '90d'],
} as const;
export interface ExpirationPolicy {
  cadence: string;
  enabled: boolean;
  keep_n: number | null;
  older_than: string | null;
  name_regex: string | null;
  name_regex_keep: string | null;
}
export const DEFAULT_EXPIRATION_POLICY: ExpirationPolicy = {
  cadence: '1d', enabled: false, keep_n: 10, older_than: '90d', name_regex: '.*', name_regex_keep: null,
};

export interface ProjectAttributesInput {
  [name: string]: unknown;
  topics?: string[] | null;
  tag_list?: string[] | null;
  container_expiration_policy_attributes?: Partial<ExpirationPolicy> | null;
  build_timeout?: number | null;
  ci_default_git_depth?: number | null;
}

type Set = Updateable<ProjectsTable>;
export type AttributeErrors = Record<string, string[]>;

const flag = (b: boolean): Flag => (b ? 1 : 0);

/** Topic names as Project#topic_list= keeps them: stripped, without blanks or case-insensitive repeats. */
export function normaliseTopics(names: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === '' || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    out.push(name);
  }
  return out;
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * The row change of the attributes given (undefined: not given; null: Grape's nil, which clears a
 * text and is refused elsewhere), or the models' errors. `current` is the project's row when it
 * exists (levels that are not given keep theirs for the repository rule).
 */
export function attributeChanges(
  input: ProjectAttributesInput,
  current: Partial<Record<AccessLevelAttribute, number>> & { container_expiration_policy?: string | null } | null,
):
  { ok: true; set: Set } | { ok: false; errors: AttributeErrors } {
  const set: Record<string, unknown> = {};
  const errors: AttributeErrors = {};
  const add = (key: string, message: string) => { (errors[key] ??= []).push(message); };

  for (const [name, feature] of Object.entries(ENABLED_FLAGS)) {
    const v = input[name];
    if (typeof v === 'boolean') set[`${feature}_access_level`] = v ? FEATURE_LEVELS.enabled : FEATURE_LEVELS.disabled;
  }
  // A level named outright wins over its feature's boolean sent with it.
  for (const feature of FEATURES) {
    const v = input[`${feature}_access_level`];
    if (typeof v === 'string') set[`${feature}_access_level`] = FEATURE_LEVELS[v as FeatureLevelName];
  }
  for (const name of [...FLAGS, ...UPDATE_FLAGS]) {
    const v = input[name];
    if (typeof v === 'boolean') set[name] = flag(v);
  }
  for (const name of Object.keys(CHOICES) as ChoiceAttribute[]) {
    const v = input[name];
    if (typeof v === 'string') set[name] = v;
  }
  for (const [name, max] of Object.entries(TEXTS) as [TextAttribute, number][]) {
    const v = input[name];
    if (v === undefined) continue;
    const text = typeof v === 'string' && v !== '' ? v : null;
    if (text !== null && [...text].length > max) add(name, `is too long (maximum is ${max} characters)`);
    set[name] = text;
  }
  // Project: no leading slash and no `..` in the CI configuration's path.
  if (typeof set.ci_config_path === 'string' && /(\.{2}|^\/)/.test(set.ci_config_path)) add('ci_config_path', 'cannot include leading slash or directory traversal.');

  if (typeof input.build_timeout === 'number') {
    const timeoutOutOfRange = input.build_timeout < BUILD_TIMEOUT_MIN || input.build_timeout >= BUILD_TIMEOUT_BELOW;
    if (timeoutOutOfRange) add('build_timeout', 'needs to be between 10 minutes and 1 month');
    set.build_timeout = input.build_timeout;
  }
  if (typeof input.ci_default_git_depth === 'number') {
    const depth = input.ci_default_git_depth;
    if (depth < 0) add('ci_cd_settings.default_git_depth', 'must be greater than or equal to 0');
    if (depth > MAX_GIT_DEPTH) add('ci_cd_settings.default_git_depth', `must be less than or equal to ${MAX_GIT_DEPTH}`);
    set.ci_default_git_depth = depth;
  }
  // `tag_list` is the deprecated name of `topics`; with both, topics wins.
  const topics = input.topics !== undefined ? input.topics : input.tag_list;
  if (topics !== undefined) set.topics = JSON.stringify(normaliseTopics(topics ?? []));

  const policy = input.container_expiration_policy_attributes;
  if (policy !== undefined && policy !== null) {
    const merged: ExpirationPolicy = {
      ...DEFAULT_EXPIRATION_POLICY,
      ...(current?.container_expiration_policy ? JSON.parse(current.container_expiration_policy) : {}),
    };
    for (const [k, v] of Object.entries(policy)) if (v !== undefined) (merged as unknown as Record<string, unknown>)[k] = v;
    const unknownCadence = !(EXPIRATION_CHOICES.cadence as readonly string[]).includes(merged.cadence);
    if (unknownCadence) add('container_expiration_policy.cadence', 'is not included in the list');
    const unknownKeepN = merged.keep_n !== null && !(EXPIRATION_CHOICES.keep_n as readonly number[]).includes(merged.keep_n);
    if (unknownKeepN) add('container_expiration_policy.keep_n', 'is not included in the list');
    if (merged.older_than !== null && !(EXPIRATION_CHOICES.older_than as readonly string[]).includes(merged.older_than)) {
      add('container_expiration_policy.older_than', 'is not included in the list');
    }
    for (const key of ['name_regex', 'name_regex_keep'] as const) {
      if (merged[key] && !compiles(merged[key]!)) add(`container_expiration_policy.${key}`, 'not valid RE2 syntax');
    }
    set.container_expiration_policy = JSON.stringify(merged);
  }

  // ProjectFeature#repository_children_level: merge requests and jobs go no further than the repository.
  const level = (name: AccessLevelAttribute) => (set[name] as number | undefined) ?? current?.[name] ?? FEATURE_LEVELS.enabled;
  for (const child of ['merge_requests_access_level', 'builds_access_level'] as const) {
    if ((set[child] !== undefined || set.repository_access_level !== undefined) && level(child) > level('repository_access_level')) {
      add(`project_feature.${child}`, 'cannot have higher visibility level than repository access level');
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, set: set as Set };
}

/** The attributes of a new project that depend on the instance or its visibility (Project's default_value_for). */
export function newProjectDefaults(opts: {
  visibilityLevel: number;
  sharedRunnersEnabled: boolean;
  autoDevopsEnabled: boolean;
  buildTimeout: number;
}): Set {
  return {
    // ProjectFeature: Pages are enabled on a public project and private on others.
    pages_access_level: opts.visibilityLevel >= 20 ? FEATURE_LEVELS.enabled : FEATURE_LEVELS.private,
    shared_runners_enabled: flag(opts.sharedRunnersEnabled),
    auto_devops_enabled: flag(opts.autoDevopsEnabled),
    build_timeout: opts.buildTimeout,
  };
}

export function levelName(level: number): FeatureLevelName {
  if (level >= FEATURE_LEVELS.public) return 'public';
  if (level >= FEATURE_LEVELS.enabled) return 'enabled';
  if (level >= FEATURE_LEVELS.private) return 'private';
  return 'disabled';
}
