/**
 * The variables a job runs with (the Service's Ci::BuildRunnerPresenter#runner_variables): the
 * predefined CI_* variables first, then the configuration's, then the CI/CD variables of the
 * instance, groups, project and pipeline (ci-variables/collect-variables.ts), then those given
 * when the job was played, later ones winning for the same key at run time.
 *
 * The CI_BUILD_* names are the deprecated aliases of the spec's deprecation table (removed in
 * 16.0), still sent beside their replacements, each pair with the same value and condition.
 */
import type { BuildRow, PipelineRow, RunnerRow } from '../../db/tables/ci.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { Variable } from '../ci-config/ci-config.ts';
import type { CommitData } from '../pipelines/git-source.ts';
import { visibilityName } from '../permissions/access.ts';

/** A variable as gitlab-runner's JobVariable reads it (common/variables.go). */
export interface RunnerVariable {
  key: string;
  value: string;
  public: boolean;
  masked: boolean;
  /** Sent only when true, as the Service's variables collection drops false `file`/`raw` flags. */
  file?: true;
  raw?: true;
}

export interface VariableContext {
  job: BuildRow;
  token: string;
  pipeline: PipelineRow;
  project: ProjectRow;
  projectFullPath: string;
  namespaceFullPath: string;
  runner: RunnerRow;
  externalUrl: string;
  serverVersion: string;
  /** CI/CD variables of the instance, groups, project and pipeline, in precedence order (request-job.ts). */
  ciVariables?: RunnerVariable[];
  /** CI_DEPLOY_USER and CI_DEPLOY_PASSWORD of the project's `gitlab-deploy-token` (deploy-tokens.ts). */
  deployVariables?: RunnerVariable[];
  /** CI_ENVIRONMENT_NAME, _SLUG, _ACTION, _URL and _TIER (environments/job-environment.ts). */
  environmentVariables?: RunnerVariable[];
  /** CI_MERGE_REQUEST_* and CI_OPEN_MERGE_REQUESTS (pipelines/merge-request-variables.ts). */
  mergeRequestVariables?: Array<[string, string]>;
}

/** CI_COMMIT_REF_SLUG: lowercased, non-alphanumerics as '-', at most 63 characters, no '-' at the ends. */
export function refSlug(ref: string): string {
  return ref.toLowerCase().replace(/[^a-z0-9]/g, '-').slice(0, 63).replace(/^-+|-+$/g, '');
}

/** The clone URL a runner uses: the job token as the password of `gitlab-ci-token` (CONTRACT §4). */
export function repositoryUrl(externalUrl: string, projectFullPath: string, token: string): string {
  const u = new URL(externalUrl);
  return `${u.protocol}//gitlab-ci-token:${token}@${u.host}${u.pathname.replace(/\/+$/, '')}/${projectFullPath}.git`;
}

/**
 * CI_SERVER_HOST, CI_SERVER_PORT, CI_SERVER_PROTOCOL and CI_SERVER_FQDN of the instance's
 * external URL: the same at pipeline creation (what `rules:if` and `include:` see) and in a job's
 * payload. CI_SERVER_FQDN (the host, with the port when it is not the protocol's default) came
 * after 15.2 with CI components, whose addresses start with it (components.ts).
 */
export function serverAddressVariables(externalUrl: string): Array<[string, string]> {
  const u = new URL(externalUrl);
  return [
    ['CI_SERVER_HOST', u.hostname],
    ['CI_SERVER_PORT', u.port || (u.protocol === 'https:' ? '443' : '80')],
    ['CI_SERVER_PROTOCOL', u.protocol.replace(':', '')],
    ['CI_SERVER_FQDN', u.host],
  ];
}

export function runnerVariables(c: VariableContext): RunnerVariable[] {
  const commit = JSON.parse(c.pipeline.commit_data) as CommitData;
  const projectUrl = `${c.externalUrl}/${c.projectFullPath}`;
  const repoUrl = repositoryUrl(c.externalUrl, c.projectFullPath, c.token);
  const isTag = c.job.tag === 1;
  const manual = c.job.run_when === 'manual';
  const triggered = c.pipeline.source === 'pipeline' || c.pipeline.source === 'parent_pipeline' || c.pipeline.source === 'trigger';
  const out: RunnerVariable[] = [];
  const add = (key: string, value: string, o: { public?: boolean; masked?: boolean } = {}) =>
    out.push({ key, value, public: o.public ?? true, masked: o.masked ?? false });
  // Deprecated name and its replacement, sent together (spec, deprecations: CI_BUILD_*).
  const pair = (oldName: string, newName: string, value: string, o: { public?: boolean; masked?: boolean } = {}) => {
    add(newName, value, o);
    add(oldName, value, o);
  };

  pair('CI_BUILD_TOKEN', 'CI_JOB_TOKEN', c.token, { public: false, masked: true });
  add('CI_REGISTRY_USER', 'gitlab-ci-token');
  add('CI', 'true');
  add('CI_SERVER', 'yes');
  add('CI_SERVER_URL', c.externalUrl);
  for (const [key, value] of serverAddressVariables(c.externalUrl)) add(key, value);
  add('CI_SERVER_VERSION', c.serverVersion);
  add('CI_API_V4_URL', `${c.externalUrl}/api/v4`);
  add('CI_PROJECT_ID', String(c.project.id));
  add('CI_PROJECT_NAME', c.project.path);
  add('CI_PROJECT_TITLE', c.project.name);
  add('CI_PROJECT_PATH', c.projectFullPath);
  add('CI_PROJECT_PATH_SLUG', refSlug(c.projectFullPath));
  add('CI_PROJECT_NAMESPACE', c.namespaceFullPath);
  add('CI_PROJECT_ROOT_NAMESPACE', c.namespaceFullPath.split('/')[0]);
  add('CI_PROJECT_URL', projectUrl);
  add('CI_PROJECT_VISIBILITY', visibilityName(c.project.visibility_level));
  add('CI_DEFAULT_BRANCH', c.project.default_branch ?? '');
  add('CI_CONFIG_PATH', c.pipeline.config_path);
  add('CI_PIPELINE_ID', String(c.pipeline.id));
  add('CI_PIPELINE_IID', String(c.pipeline.iid));
  add('CI_PIPELINE_SOURCE', c.pipeline.source);
  add('CI_PIPELINE_URL', `${projectUrl}/-/pipelines/${c.pipeline.id}`);
  add('CI_PIPELINE_CREATED_AT', c.pipeline.created_at.replace(/\.\d{3}Z$/, 'Z'));
  if (triggered) pair('CI_BUILD_TRIGGERED', 'CI_PIPELINE_TRIGGERED', 'true');
  pair('CI_BUILD_ID', 'CI_JOB_ID', String(c.job.id));
  pair('CI_BUILD_NAME', 'CI_JOB_NAME', c.job.name);
  pair('CI_BUILD_STAGE', 'CI_JOB_STAGE', c.job.stage);
  if (manual) pair('CI_BUILD_MANUAL', 'CI_JOB_MANUAL', 'true');
  add('CI_JOB_URL', `${projectUrl}/-/jobs/${c.job.id}`);
  add('CI_JOB_STARTED_AT', (c.job.started_at ?? '').replace(/\.\d{3}Z$/, 'Z'));
  add('CI_JOB_TIMEOUT', String(c.job.timeout));
  pair('CI_BUILD_REF', 'CI_COMMIT_SHA', c.pipeline.sha);
  add('CI_COMMIT_SHORT_SHA', c.pipeline.sha.slice(0, 8));
  pair('CI_BUILD_BEFORE_SHA', 'CI_COMMIT_BEFORE_SHA', c.pipeline.before_sha);
  // A merge request pipeline runs on refs/merge-requests/:iid/head: its ref name is the source
  // branch, and it is no branch pipeline (Ci::Pipeline#source_ref, #branch?).
  const mrVariables = c.mergeRequestVariables ?? [];
  const refName = mrVariables.find(([k]) => k === 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME')?.[1] ?? c.job.ref;
  pair('CI_BUILD_REF_NAME', 'CI_COMMIT_REF_NAME', refName);
  pair('CI_BUILD_REF_SLUG', 'CI_COMMIT_REF_SLUG', refSlug(refName));
  if (isTag) {
    pair('CI_BUILD_TAG', 'CI_COMMIT_TAG', c.job.ref);
  } else if (c.pipeline.source !== 'merge_request_event') {
    add('CI_COMMIT_BRANCH', c.job.ref);
  }
  add('CI_COMMIT_MESSAGE', commit.message);
  add('CI_COMMIT_TITLE', commit.title);
  add('CI_COMMIT_DESCRIPTION', commit.message.includes('\n') ? commit.message.slice(commit.message.indexOf('\n') + 1).replace(/^\n+/, '') : '');
  add('CI_COMMIT_AUTHOR', `${commit.author_name} <${commit.author_email}>`);
  add('CI_COMMIT_TIMESTAMP', commit.committed_date.replace(/\.\d{3}Z$/, '+00:00'));
  for (const [key, value] of mrVariables) add(key, value);
  pair('CI_BUILD_REPO', 'CI_REPOSITORY_URL', repoUrl);
  // Ci::Build#persisted_variables: the deploy token's right after the repository URL.
  out.push(...(c.deployVariables ?? []));
  add('CI_RUNNER_ID', String(c.runner.id));
  add('CI_RUNNER_DESCRIPTION', c.runner.description ?? '');
  add('CI_RUNNER_TAGS', JSON.stringify(c.runner.tag_list === '' ? [] : c.runner.tag_list.split(' ')));

  const options = JSON.parse(c.job.options) as {
    node?: { index: number; total: number } | null;
  };
  // parallel and matrix copies (Ci::Build#predefined_variables).
  if (options.node) {
    add('CI_NODE_INDEX', String(options.node.index));
    add('CI_NODE_TOTAL', String(options.node.total));
  }
  // CI_ENVIRONMENT_* of the job's environment (environments/job-environment.ts).
  out.push(...(c.environmentVariables ?? []));
  for (const v of JSON.parse(c.job.yaml_variables) as Variable[]) add(v.key, v.value);
  out.push(...(c.ciVariables ?? []));
  for (const v of JSON.parse(c.job.job_variables) as Variable[]) add(v.key, v.value, { public: false });
  return out;
}
