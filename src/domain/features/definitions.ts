/**
 * kiln's feature flags (the Service's config/feature_flags/**.yml definitions, read by
 * Feature::Definition): each flag kiln reads, with what it gates. GET /features/definitions
 * lists them; POST /features/:name sets their gates (features.ts).
 */
export interface FeatureDefinition {
  name: string;
  introduced_by_url: string | null;
  rollout_issue_url: string | null;
  milestone: string | null;
  log_state_changes: boolean | null;
  type: 'development' | 'ops';
  group: string | null;
  default_enabled: boolean;
}

/** The actor kinds a flag is asked about. */
export type FeatureActorKind = 'Project' | 'User' | 'Group';

const flag = (name: string, type: FeatureDefinition['type'], group: string): FeatureDefinition => ({
  name, introduced_by_url: null, rollout_issue_url: null, milestone: '15.2', log_state_changes: null, type, group, default_enabled: true,
});

export const FEATURE_DEFINITIONS: readonly FeatureDefinition[] = [
  // Counting a project's git fetches per day (domain/statistics): asked per project on every
  // upload-pack over HTTP and SSH; off, fetches go uncounted.
  flag('project_daily_fetch_statistics', 'ops', 'group::source code'),
  // Refreshing a project's statistics after pushes, API writes and artifact uploads: asked per
  // project; off, no refresh is queued (housekeeping still measures).
  flag('project_statistics_refresh', 'ops', 'group::source code'),
  // POST /projects/remote-import (lib/api/project_import.rb 15.2: `not_found!` unless enabled; on by default there).
  flag('import_project_from_remote_file', 'development', 'group::import'),
  // POST /projects/remote-import-s3: off by default, as in the Service 15.2.
  { ...flag('import_project_from_remote_file_s3', 'development', 'group::import'), default_enabled: false },
  // Auto-disabling of failing webhooks (domain/web-hooks/auto-disabling.ts): asked per project
  // (system hooks: no actor) before each delivery and for a hook's alert_status; off, as in 15.2
  // (introduced in 13.12 behind it, disabled by default), every hook runs whatever its failures.
  {
    name: 'web_hooks_disable_failed', introduced_by_url: null, rollout_issue_url: null, milestone: '13.12',
    log_state_changes: null, type: 'development', group: 'group::integrations', default_enabled: false,
  },
  // Running a fork's merge request pipelines in its target (domain/pipelines/merge-request-pipelines.ts):
  // asked per target project; on, they stay in the fork, as the Service's kill switch (off by default).
  {
    name: 'ci_disallow_to_create_merge_request_pipelines_in_target_project',
    introduced_by_url: 'https://gitlab.com/gitlab-org/gitlab/-/merge_requests/40724',
    rollout_issue_url: 'https://gitlab.com/gitlab-org/gitlab/-/issues/235119', milestone: '13.4',
    log_state_changes: null, type: 'development', group: 'group::progressive delivery', default_enabled: false,
  },
  // Broadcast messages for some roles only (web/broadcast.ts): on, a message with
  // target_access_levels shows on the pages of a project or group where the viewer holds one of
  // them; off, as in 15.2 (introduced in 14.9, disabled by default), such a message shows nowhere.
  {
    name: 'role_targeted_broadcast_messages', introduced_by_url: null, rollout_issue_url: null, milestone: '14.9',
    log_state_changes: null, type: 'development', group: 'group::activation', default_enabled: false,
  },
];

export function featureDefinition(name: string): FeatureDefinition | undefined {
  return FEATURE_DEFINITIONS.find((d) => d.name === name);
}
