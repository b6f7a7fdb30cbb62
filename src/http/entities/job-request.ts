/**
 * The job payload of POST /jobs/request, as gitlab-runner reads it (the Service's
 * Entities::Ci::JobRequest::Response): job and git info with a clone URL carrying the job token,
 * variables, steps, image, artifacts to upload, dependencies whose artifacts to download, and
 * `job_age` (deprecated, removed in 16.0; spec deprecations).
 */
import type { BuildRow, JobArtifactRow, PipelineRow, RunnerRow } from '../../db/tables/ci.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { ArtifactsConfig, CacheConfig, ImageConfig, ServiceConfig } from '../../domain/ci-config/ci-config.ts';
import { repositoryUrl, runnerVariables, type RunnerVariable } from '../../domain/runners/predefined-variables.ts';
import { FAILURE_REASONS } from '../../domain/runners/update-job-state.ts';
import { expandVariables } from '../../domain/ci-variables/expand-variables.ts';
import { persistentRefPath } from '../../domain/pipelines/persistent-ref.ts';

export interface JobRequestContext {
  job: BuildRow;
  token: string;
  runner: RunnerRow;
  pipeline: PipelineRow;
  project: ProjectRow;
  projectFullPath: string;
  namespaceFullPath: string;
  /** Finished builds of earlier stages (or the needed ones), with their artifacts. */
  dependencies: { job: BuildRow; artifacts: JobArtifactRow[] }[];
  externalUrl: string;
  serverVersion: string;
  ciVariables?: RunnerVariable[];
  deployVariables?: RunnerVariable[];
  environmentVariables?: RunnerVariable[];
  mergeRequestVariables?: Array<[string, string]>;
  /** The job's `id_tokens:`, signed (oauth/ci-id-tokens.ts): each a masked variable of its name. */
  idTokenVariables?: RunnerVariable[];
  /** Whether refs/pipelines/<id> exists for the runner to fetch (domain/pipelines/persistent-ref.ts). */
  persistentRef?: boolean;
}

interface Options {
  script: string[];
  before_script: string[];
  after_script: string[];
  image: ImageConfig | null;
  artifacts: ArtifactsConfig | null;
  services?: ServiceConfig[];
  cache?: Array<CacheConfig & { key: string | { files: string[]; prefix?: string }; resolvedKey?: string }>;
  release?: Record<string, unknown> | null;
}

/**
 * The step a job's `release:` becomes (the Service's Gitlab::Ci::Build::Releaser): one
 * `release-cli create` command line, each value double-quoted as the Service writes it (the job's
 * shell expands variables in it), the milestones one flag each and every asset link as a JSON
 * string. Runners with release-cli run it; kiln runner reads it and creates the release itself.
 */
export function releaseScript(release: Record<string, unknown>): string {
  let command = 'release-cli create';
  for (const key of ['name', 'description', 'tag_name', 'tag_message', 'ref', 'released_at']) {
    const value = release[key];
    if (value !== undefined && value !== null) command += ` --${key.replace(/_/g, '-')} "${String(value)}"`;
  }
  const milestones = release.milestones;
  for (const m of Array.isArray(milestones) ? milestones : milestones === undefined || milestones === null ? [] : [milestones]) {
    command += ` --milestone "${String(m)}"`;
  }
  const assets = release.assets as { links?: unknown } | undefined;
  for (const link of Array.isArray(assets?.links) ? assets.links : []) command += ` --assets-link ${JSON.stringify(JSON.stringify(link))}`;
  return command;
}

/** Report formats the runner uploads them in (Ci::JobArtifact::TYPE_AND_FORMAT_PAIRS). */
const GZIP_REPORTS = new Set([
  'junit', 'metrics', 'dotenv', 'cobertura', 'coverage_report', 'cluster_image_scanning', 'cyclonedx',
  'requirements',
]);

/** image and services as Entities::Ci::JobRequest::Image / Service send them. */
function presentImage(i: ImageConfig) {
  // pull_policy only when the configuration sets one (Entities::Ci::JobRequest::Image).
  return {
    name: i.name, entrypoint: i.entrypoint ?? null, ports: i.ports ?? [],
    // executor_opts only when the configuration sets `docker:` (image:docker:platform/user, after 15.2).
    ...(i.executorOpts ? { executor_opts: i.executorOpts } : {}),
    ...(i.pullPolicy ? { pull_policy: i.pullPolicy } : {}),
  };
}

function presentService(s: ServiceConfig) {
  return {
    ...presentImage(s), alias: s.alias ?? null, command: s.command ?? null,
    ...(s.variables ? { variables: s.variables.map((v) => ({ key: v.key, value: v.value, public: true, masked: false })) } : {}),
  };
}

/** cache entries (Entities::Ci::JobRequest::Cache); a `key:files` key was resolved when the job was created. */
function presentCache(c: NonNullable<Options['cache']>[number]) {
  const key = typeof c.key === 'string' ? c.key : c.resolvedKey ?? `${c.key.prefix ? `${c.key.prefix}-` : ''}default`;
  return { key, untracked: c.untracked, policy: c.policy, paths: c.paths, when: c.when, fallback_keys: c.fallbackKeys ?? [] };
}

function artifactsToUpload(a: ArtifactsConfig | null) {
  if (!a) return [];
  const out: Record<string, unknown>[] = [];
  if (a.paths.length > 0 || a.untracked) {
    out.push({
      name: a.name ?? null, untracked: a.untracked, paths: a.paths, when: a.when, expire_in: a.expireIn,
      artifact_type: 'archive', artifact_format: 'zip',
    });
  }
  if (a.exclude && out.length > 0) out[0].exclude = a.exclude;
  for (const [type, paths] of Object.entries(a.reports)) {
    if (paths.length === 0) continue;
    out.push({
      name: type === 'junit' ? 'junit.xml' : type, untracked: false, paths, when: 'always', expire_in: a.expireIn,
      artifact_type: type, artifact_format: GZIP_REPORTS.has(type) ? 'gzip' : 'raw',
    });
  }
  return out;
}

const seconds = (from: string | null, to: string | null) => (from && to ? Math.max(
  0, Math.round((Date.parse(to) - Date.parse(from)) / 1000),
) : 0);

/** What the runner fetches: the tag, the branch, or a merge request pipeline's refs/merge-requests/:iid/head itself. */
function refspecOf(ref: string, isTag: boolean): string {
  if (isTag) return `+refs/tags/${ref}:refs/tags/${ref}`;
  if (ref.startsWith('refs/merge-requests/')) return `+${ref}:${ref}`;
  return `+refs/heads/${ref}:refs/remotes/origin/${ref}`;
}

export function presentJobRequest(c: JobRequestContext) {
  const o = JSON.parse(c.job.options) as Options;
  const isTag = c.job.tag === 1;
  const steps: Record<string, unknown>[] = [{
    name: 'script', script: [...o.before_script, ...o.script], timeout: c.job.timeout, when: 'on_success', allow_failure: false,
  }];
  // Gitlab::Ci::Build::Step.from_release: after the script, before after_script, on success only.
  if (o.release) {
    steps.push({ name: 'release', script: [releaseScript(o.release)], timeout: c.job.timeout, when: 'on_success', allow_failure: false });
  }
  if (o.after_script.length > 0) {
    steps.push({ name: 'after_script', script: o.after_script, timeout: c.job.timeout, when: 'always', allow_failure: true });
  }
  return {
    id: c.job.id,
    token: c.token,
    // The project's Git strategy (build_git_strategy: fetch or clone) and clone depth (ci_default_git_depth).
    allow_git_fetch: c.project.build_git_strategy !== 'clone',
    job_info: {
      id: c.job.id, name: c.job.name, stage: c.job.stage, project_id: c.project.id, project_name: c.project.name,
      time_in_queue_seconds: seconds(c.job.queued_at, c.job.started_at),
    },
    git_info: {
      repo_url: repositoryUrl(c.externalUrl, c.projectFullPath, c.token),
      ref: c.job.ref,
      sha: c.pipeline.sha,
      before_sha: c.pipeline.before_sha,
      ref_type: isTag ? 'tag' : 'branch',
      // The pipeline's persistent ref first while it exists (Ci::BuildRunnerPresenter#refspecs), so the
      // job's commit is fetched even when its branch has moved on or is gone.
      refspecs: [
        ...(c.persistentRef ? [`+${persistentRefPath(c.pipeline.id)}:${persistentRefPath(c.pipeline.id)}`] : []),
        refspecOf(c.job.ref, isTag),
      ],
      depth: c.project.ci_default_git_depth,
    },
    runner_info: { timeout: c.job.timeout, runner_session_url: null },
    // Variables inside variables are expanded as the Service 15.2 sends them (raw ones excepted).
    variables: expandVariables([...runnerVariables(c), ...(c.idTokenVariables ?? [])]),
    steps,
    image: o.image ? presentImage(o.image) : null,
    services: (o.services ?? []).map(presentService),
    artifacts: artifactsToUpload(o.artifacts),
    cache: (o.cache ?? []).map(presentCache),
    credentials: [],
    dependencies: c.dependencies.map((d) => {
      const archive = d.artifacts.find((a) => a.file_type === 'archive');
      return {
        id: d.job.id, name: d.job.name, token: c.token,
        ...(archive ? { artifacts_file: { filename: archive.filename, size: archive.size } } : {}),
      };
    }),
    features: { trace_sections: true, failure_reasons: FAILURE_REASONS },
    // Deprecated (spec: job_age returned by POST /jobs/request, removed in 16.0): seconds since queued.
    job_age: seconds(c.job.queued_at, new Date().toISOString()),
  };
}
