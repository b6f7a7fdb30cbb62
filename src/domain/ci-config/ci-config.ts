/**
 * The model a `.gitlab-ci.yml` becomes: ordered stages and the jobs of each, already checked.
 * Jobs of type `bridge` carry a `trigger` instead of scripts (spec, Bridge job).
 */

export const DEFAULT_STAGES = ['build', 'test', 'deploy'] as const;
/** Stages every pipeline has around the configured ones (the Service's `.pre` and `.post`). */
export const PRE_STAGE = '.pre';
export const POST_STAGE = '.post';

export const WHEN_VALUES = ['on_success', 'on_failure', 'always', 'manual'] as const;
export type When = (typeof WHEN_VALUES)[number];

export interface Variable {
  key: string;
  value: string;
}

export interface ImageConfig {
  name: string;
  entrypoint?: string[];
  /** always, if-not-present, never (one or several). */
  pullPolicy?: string[];
  ports?: Array<{ number: number; protocol?: string; name?: string }>;
  /** `docker:` (after 15.2): options for the Docker executor, sent to the runner as `executor_opts`. */
  executorOpts?: { docker: { platform?: string; user?: string } };
}

export interface ServiceConfig extends ImageConfig {
  alias?: string;
  command?: string[];
  variables?: Variable[];
}

export interface CacheConfig {
  key: string | { files: string[]; prefix?: string };
  untracked: boolean;
  /** pull, push, pull-push. */
  policy: string;
  paths: string[];
  /** on_success, on_failure, always. */
  when: string;
  /** `fallback_keys` (after 15.2): keys the runner tries in order when `key` has no cache yet. */
  fallbackKeys?: string[];
}

export interface RetryConfig {
  max: number;
  /** Failure reasons that are retried (`always` for any). */
  when: string[];
}

export interface EnvironmentConfig {
  name: string;
  url?: string;
  action: string;
  on_stop?: string;
  auto_stop_in?: string;
  deployment_tier?: string;
  kubernetes?: unknown;
}

export interface NeedConfig {
  name: string;
  artifacts: boolean;
  optional: boolean;
  /** `needs:parallel:matrix`: the names of the matrix copies meant. */
  matrixNames?: string[];
}

export interface ArtifactsConfig {
  name?: string;
  paths: string[];
  untracked: boolean;
  /** on_success, on_failure, always. */
  when: string;
  /** The text as written (`1 week`), passed to the runner; null when not given. */
  expireIn: string | null;
  reports: { junit: string[] } & Record<string, string[]>;
  exclude?: string[];
  exposeAs?: string;
  /**
   * `artifacts:access` (after 15.2; `public: false` is `developer`): who may download the archive
   * through the API — all (everyone who may read the job), developer, maintainer, or none.
   */
  access?: 'all' | 'developer' | 'maintainer' | 'none';
}

/** `id_tokens:` (after 15.2): a JWT by this variable name, for these audiences. */
export interface IdTokenConfig {
  name: string;
  aud: string | string[];
}

export interface TriggerConfig {
  /** Multi-project pipeline: the full path of the downstream project. */
  project?: string;
  /** Branch of the downstream project (its default branch when absent). */
  branch?: string;
  /** Child pipeline: the local file of this repository to read the child's configuration from. */
  include?: string;
  /** Child pipeline: include entries (project, template, remote, several files) read as `include:`. */
  includes?: unknown[];
  /** What the downstream pipeline receives (yaml_variables on by default). */
  forward?: { yaml_variables?: boolean; pipeline_variables?: boolean };
  /** `depend`: the bridge mirrors its downstream pipeline's status. */
  strategy?: 'depend';
}

export interface JobConfig {
  name: string;
  type: 'build' | 'bridge';
  stage: string;
  stageIdx: number;
  when: When;
  allowFailure: boolean;
  script: string[];
  beforeScript: string[];
  afterScript: string[];
  image: ImageConfig | null;
  variables: Variable[];
  tags: string[];
  /** Names of the jobs this one needs (DAG), or null to follow stage order. */
  needs: string[] | null;
  artifacts: ArtifactsConfig | null;
  trigger: TriggerConfig | null;
  /** Seconds, when the job sets `timeout:`. */
  timeout: number | null;
  services: ServiceConfig[];
  cache: CacheConfig[];
  /** Jobs whose artifacts to download, or null for every job of earlier stages. */
  dependencies: string[] | null;
  retry: RetryConfig | null;
  interruptible: boolean | null;
  /** The regex the job's coverage is read from the trace with, without its slashes. */
  coverage: string | null;
  environment: EnvironmentConfig | null;
  release: Record<string, unknown> | null;
  resourceGroup: string | null;
  /** Exit codes that count as an allowed failure (`allow_failure:exit_codes`). */
  allowFailureExitCodes: number[] | null;
  startIn: string | null;
  /** `parallel: N` or matrix: this instance's index and the total, for CI_NODE_INDEX/TOTAL. */
  node: { index: number; total: number } | null;
  /** Full `needs:` entries (the plain `needs` keeps the names for the engine). */
  needsDetail: NeedConfig[] | null;
  /** `id_tokens:`, the job's own or `default:`'s; null when none. */
  idTokens: IdTokenConfig[] | null;
}

/** `workflow:auto_cancel` (after 15.2); null where not given. */
export interface AutoCancelConfig {
  /** conservative, interruptible or none. */
  onNewCommit: string | null;
  /** none or all. */
  onJobFailure: string | null;
}

export interface PipelineConfig {
  stages: string[];
  variables: Variable[];
  jobs: JobConfig[];
  /** `workflow:name`, its variables expanded (the pipeline's `name`); null when not given. */
  name: string | null;
  autoCancel: AutoCancelConfig;
}

export type ParseResult = { ok: true; config: PipelineConfig } | { ok: false; error: string };
