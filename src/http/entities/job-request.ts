/**
 * The job payload of POST /jobs/request, as gitlab-runner reads it (the Service's
 * Entities::Ci::JobRequest::Response): job and git info with a clone URL carrying the job token,
 * variables, steps, image, artifacts to upload, dependencies whose artifacts to download, and
 * `job_age` (deprecated, removed in 16.0; spec deprecations).
 */
import type { BuildRow, JobArtifactRow, PipelineRow, RunnerRow } from '../../db/tables/ci.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { ArtifactsConfig, ImageConfig } from '../../domain/ci-config/ci-config.ts';
import { repositoryUrl, runnerVariables } from '../../domain/runners/predefined-variables.ts';
import { FAILURE_REASONS } from '../../domain/runners/update-job-state.ts';

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
}

/** The Service's default clone depth for new projects (ci_default_git_depth). */
const GIT_DEPTH = 20;

interface Options {
  script: string[];
  before_script: string[];
  after_script: string[];
  image: ImageConfig | null;
  artifacts: ArtifactsConfig | null;
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
  if (a.reports.junit.length > 0) {
    out.push({
      name: 'junit.xml', untracked: false, paths: a.reports.junit, when: 'always', expire_in: a.expireIn,
      artifact_type: 'junit', artifact_format: 'gzip',
    });
  }
  return out;
}

const seconds = (from: string | null, to: string | null) => (from && to ? Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)) : 0);

export function presentJobRequest(c: JobRequestContext) {
  const o = JSON.parse(c.job.options) as Options;
  const isTag = c.job.tag === 1;
  const steps: Record<string, unknown>[] = [{
    name: 'script', script: [...o.before_script, ...o.script], timeout: c.job.timeout, when: 'on_success', allow_failure: false,
  }];
  if (o.after_script.length > 0) {
    steps.push({ name: 'after_script', script: o.after_script, timeout: c.job.timeout, when: 'always', allow_failure: true });
  }
  return {
    id: c.job.id,
    token: c.token,
    allow_git_fetch: true,
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
      refspecs: [isTag ? `+refs/tags/${c.job.ref}:refs/tags/${c.job.ref}` : `+refs/heads/${c.job.ref}:refs/remotes/origin/${c.job.ref}`],
      depth: GIT_DEPTH,
    },
    runner_info: { timeout: c.job.timeout, runner_session_url: null },
    variables: runnerVariables(c),
    steps,
    image: o.image ? { name: o.image.name, entrypoint: o.image.entrypoint ?? null, ports: [] } : null,
    services: [],
    artifacts: artifactsToUpload(o.artifacts),
    cache: [],
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
