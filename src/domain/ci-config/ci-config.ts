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
}

export interface ArtifactsConfig {
  name?: string;
  paths: string[];
  untracked: boolean;
  /** on_success, on_failure, always. */
  when: string;
  /** The text as written (`1 week`), passed to the runner; null when not given. */
  expireIn: string | null;
  reports: { junit: string[] };
}

export interface TriggerConfig {
  /** Multi-project pipeline: the full path of the downstream project. */
  project?: string;
  /** Branch of the downstream project (its default branch when absent). */
  branch?: string;
  /** Child pipeline: the local file of this repository to read the child's configuration from. */
  include?: string;
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
}

export interface PipelineConfig {
  stages: string[];
  variables: Variable[];
  jobs: JobConfig[];
}

export type ParseResult = { ok: true; config: PipelineConfig } | { ok: false; error: string };
