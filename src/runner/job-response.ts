/**
 * The job payload of POST /jobs/request as the Service's runner reads it (gitlab-runner
 * common/network.go, JobResponse): every field is optional here, since a server may omit what a
 * job does not use, and the runner must read the full shapes (services, cache, exclude,
 * fallback_keys, pull_policy, file variables) whether or not this server sends them yet.
 */

export interface JobVariable {
  key: string;
  value: string;
  public?: boolean;
  internal?: boolean;
  /** The value is written to a file and the variable holds the file's path. */
  file?: boolean;
  masked?: boolean;
  /** Not expanded: `$OTHER` inside the value stays as written. */
  raw?: boolean;
}

export interface ImageSpec {
  name: string;
  alias?: string;
  command?: string[];
  entrypoint?: string[] | null;
  ports?: { number?: number; protocol?: string; name?: string }[];
  variables?: JobVariable[];
  pull_policy?: string[];
}

export interface ArtifactSpec {
  name?: string | null;
  untracked?: boolean;
  paths?: string[] | null;
  exclude?: string[] | null;
  when?: 'on_success' | 'on_failure' | 'always' | '' | null;
  artifact_type?: string;
  artifact_format?: string;
  expire_in?: string | null;
}

export interface CacheSpec {
  key?: string | null;
  untracked?: boolean;
  policy?: 'pull-push' | 'pull' | 'push' | '' | null;
  paths?: string[] | null;
  when?: 'on_success' | 'on_failure' | 'always' | '' | null;
  fallback_keys?: string[] | null;
}

export interface StepSpec {
  name: string;
  script: string[];
  timeout?: number;
  when?: 'on_success' | 'on_failure' | 'always';
  allow_failure?: boolean;
}

export interface DependencySpec {
  id: number;
  token: string;
  name: string;
  artifacts_file?: { filename: string; size: number } | null;
}

export interface JobResponse {
  id: number;
  token: string;
  allow_git_fetch?: boolean;
  job_info: { id?: number; name: string; stage: string; project_id: number; project_name: string; time_in_queue_seconds?: number };
  git_info: {
    repo_url: string; ref: string; sha: string; before_sha?: string; ref_type?: 'branch' | 'tag';
    refspecs?: string[] | null; depth?: number;
  };
  runner_info: { timeout: number };
  variables?: JobVariable[] | null;
  steps?: StepSpec[] | null;
  image?: ImageSpec | null;
  services?: ImageSpec[] | null;
  artifacts?: ArtifactSpec[] | null;
  cache?: CacheSpec[] | null;
  credentials?: { type: string; url: string; username: string; password: string }[] | null;
  dependencies?: DependencySpec[] | null;
  features?: { trace_sections?: boolean; failure_reasons?: string[]; token_mask_prefixes?: string[] } | null;
  hooks?: { name: string; script: string[] }[] | null;
}

/** The Service's failure reasons a runner sends (common/network.go). */
export type FailureReason = 'script_failure' | 'runner_system_failure' | 'job_execution_timeout' | 'unknown_failure';
