/** Tables of the CI area (migration 2026-11-22T1050_ci): pipelines, jobs and bridges, artifacts, runners. */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface CiPipelinesTable {
  id: Generated<number>;
  /** Per-project sequence number (the Service's `iid`). */
  iid: number;
  project_id: number;
  ref: string;
  tag: Flag;
  sha: string;
  before_sha: string;
  /** api, parent_pipeline (child pipelines), pipeline (multi-project downstream). */
  source: string;
  status: string;
  user_id: number | null;
  /** The bridge job that created this pipeline, for downstream pipelines. */
  upstream_bridge_id: number | null;
  /** Path of the configuration file this pipeline was read from. */
  config_path: string;
  /** The commit as git reports it (JSON: title, message, author, committer, dates, parent ids). */
  commit_data: string;
  /** The configuration error of a pipeline created failed (push pipelines), else null. */
  yaml_errors: Generated<string | null>;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Whole seconds its latest builds ran, stored when it finishes (migration 2026-11-26T1700; pipeline-timing.ts). */
  duration: Generated<number | null>;
  /** A merge request pipeline's request (source merge_request_event; migration 2026-11-28T1500). */
  merge_request_id: Generated<number | null>;
  /** The pipeline schedule that made it (source schedule; migration 2026-11-29T0300). */
  pipeline_schedule_id: Generated<number | null>;
  /** workflow:name, expanded (migration 2026-11-30T0700). */
  name: Generated<string | null>;
  /** workflow:auto_cancel:on_new_commit and :on_job_failure, null when not given (migration 2026-11-30T0700). */
  auto_cancel_on_new_commit: Generated<string | null>;
  auto_cancel_on_job_failure: Generated<string | null>;
}
export type PipelineRow = Selectable<CiPipelinesTable>;

export interface CiBuildsTable {
  id: Generated<number>;
  /**
   * 'build' (a job a runner runs), 'bridge' (a trigger job that creates a downstream pipeline) or
   * 'generic' (a status an external CI system reported, POST /projects/:id/statuses/:sha).
   */
  type: string;
  project_id: number;
  pipeline_id: number;
  name: string;
  stage: string;
  stage_idx: number;
  status: string;
  /** The job's `when:` (on_success, on_failure, always, manual); `when` itself is an SQL keyword. */
  run_when: string;
  allow_failure: Flag;
  failure_reason: string | null;
  ref: string;
  tag: Flag;
  user_id: number | null;
  runner_id: number | null;
  /** SHA-256 digest of the job token; set while a runner holds the job. */
  token_digest: string | null;
  /** JSON: script, before_script, after_script, image, artifacts, trigger. */
  options: string;
  /** JSON array of {key, value}: the configuration's variables (global, then the job's). */
  yaml_variables: string;
  /** JSON array of {key, value}: variables given when the job was played. */
  job_variables: string;
  /** Space-separated runner tags the job asks for. */
  tag_list: string;
  /** JSON array of job names this job needs, or null when it follows stage order. */
  needs: string | null;
  /** Seconds the job may run. */
  timeout: number;
  /** Set on the old job when it was retried; lists hide it unless include_retried. */
  retried: Generated<Flag>;
  /** Bytes of the job log written so far (the next Content-Range must start here). */
  trace_size: Generated<number>;
  downstream_pipeline_id: number | null;
  created_at: string;
  updated_at: string;
  queued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  erased_at: string | null;
  artifacts_expire_at: string | null;
  /** Percent read from the trace with the job's `coverage:` regex; an external status's as reported. */
  coverage: Generated<number | null>;
  /** An external status's link and text (type `generic`; migration 2026-11-28T1000); null for jobs. */
  target_url: Generated<string | null>;
  description: Generated<string | null>;
}
export type BuildRow = Selectable<CiBuildsTable>;

export interface CiJobArtifactsTable {
  id: Generated<number>;
  job_id: number;
  project_id: number;
  /** archive, metadata, junit. */
  file_type: string;
  /** zip, gzip, raw. */
  file_format: string;
  filename: string;
  size: number;
  /** Relative to KILN_DATA_DIR. */
  file_path: string;
  expire_at: string | null;
  created_at: string;
}
export type JobArtifactRow = Selectable<CiJobArtifactsTable>;

export interface CiRunnersTable {
  id: Generated<number>;
  /** SHA-256 digest of the runner's authentication token. */
  token_digest: string;
  description: string | null;
  maintenance_note: string | null;
  /** instance_type, group_type or project_type, by the registration token used. */
  runner_type: string;
  /** The group of a group runner (migration 2026-11-24T1610). */
  group_id: Generated<number | null>;
  active: Generated<Flag>;
  locked: Generated<Flag>;
  run_untagged: Generated<Flag>;
  /** Space-separated. */
  tag_list: string;
  access_level: string;
  maximum_timeout: number | null;
  /** What the runner said about itself (name, version, revision, platform, architecture). */
  name: string | null;
  version: string | null;
  revision: string | null;
  platform: string | null;
  architecture: string | null;
  ip_address: string | null;
  contacted_at: string | null;
  created_at: string;
  updated_at: string;
}
export type RunnerRow = Selectable<CiRunnersTable>;

declare module '../types.ts' {
  interface DB {
    ci_pipelines: CiPipelinesTable;
    ci_builds: CiBuildsTable;
    ci_job_artifacts: CiJobArtifactsTable;
    ci_runners: CiRunnersTable;
  }
}
