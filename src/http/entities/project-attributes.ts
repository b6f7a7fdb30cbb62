/**
 * The attributes a project holds (domain/projects/project-attributes.ts) as the Service 15.2's
 * Project entity answers them: feature levels as words, the API v4 booleans beside them, merge
 * and CI settings, the container expiration policy. Spread into the Project entity (project.ts).
 *
 * The Service answers `issues_enabled` and its kind as whether the viewer may use the feature; a
 * `private` feature is answered as enabled here, as the Service answers it to the project's
 * members, without looking up the viewer's membership in every project of a list.
 */
import { Type, type Static, type TObject } from 'typebox';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type {} from '../../db/tables/project-attributes.ts';
import {
  DEFAULT_EXPIRATION_POLICY, ENABLED_FLAGS, FEATURES, FLAGS, levelName, UPDATE_FLAGS, type ExpirationPolicy,
} from '../../domain/projects/project-attributes.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const ContainerExpirationPolicySchema = Type.Object({
  cadence: Type.String(),
  enabled: Type.Boolean(),
  keep_n: Type.Union([Type.Integer(), Type.Null()]),
  older_than: NString,
  name_regex: NString,
  name_regex_keep: NString,
  next_run_at: NString,
}, { title: 'ContainerExpirationPolicy' });

export const ProjectAttributesProperties = {
  ...Object.fromEntries(Object.keys(ENABLED_FLAGS).map((name) => [name, Type.Boolean()])) as
    Record<keyof typeof ENABLED_FLAGS, ReturnType<typeof Type.Boolean>>,
  ...Object.fromEntries(FEATURES.map((f) => [`${f}_access_level`, Type.String()])),
  ...Object.fromEntries([...FLAGS, ...UPDATE_FLAGS].map((name) => [name, Type.Boolean()])),
  build_git_strategy: Type.String(),
  auto_cancel_pending_pipelines: Type.String(),
  ci_config_path: NString,
  merge_method: Type.String(),
  squash_option: Type.String(),
  suggestion_commit_message: NString,
  merge_commit_template: NString,
  squash_commit_template: NString,
  auto_devops_deploy_strategy: Type.String(),
  build_timeout: Type.Integer(),
  ci_default_git_depth: Type.Integer(),
  container_expiration_policy: ContainerExpirationPolicySchema,
};

export type ProjectAttributes = Static<TObject<typeof ProjectAttributesProperties>>;

/** The stored topics. */
export function projectTopics(p: ProjectRow): string[] {
  return JSON.parse(p.topics) as string[];
}

export function presentProjectAttributes(p: ProjectRow): ProjectAttributes {
  const out: Record<string, unknown> = {};
  const row = p as unknown as Record<string, unknown>;
  for (const [name, feature] of Object.entries(ENABLED_FLAGS)) out[name] = (row[`${feature}_access_level`] as number) > 0;
  for (const f of FEATURES) out[`${f}_access_level`] = levelName(row[`${f}_access_level`] as number);
  for (const name of [...FLAGS, ...UPDATE_FLAGS]) out[name] = row[name] === 1;
  const policy: ExpirationPolicy = p.container_expiration_policy ? JSON.parse(p.container_expiration_policy) : DEFAULT_EXPIRATION_POLICY;
  return Object.assign(out as ProjectAttributes, {
    build_git_strategy: p.build_git_strategy,
    auto_cancel_pending_pipelines: p.auto_cancel_pending_pipelines,
    ci_config_path: p.ci_config_path,
    merge_method: p.merge_method,
    squash_option: p.squash_option,
    suggestion_commit_message: p.suggestion_commit_message,
    merge_commit_template: p.merge_commit_template,
    squash_commit_template: p.squash_commit_template,
    auto_devops_deploy_strategy: p.auto_devops_deploy_strategy,
    build_timeout: p.build_timeout,
    ci_default_git_depth: p.ci_default_git_depth,
    // No registry runs the policy: it never has a next run.
    container_expiration_policy: { ...policy, next_run_at: null },
  });
}
