/**
 * What the configuration sees while a pipeline is created: the predefined variables a pipeline
 * has at creation (the Service's Ci::Pipeline#predefined_variables, Project#predefined_variables,
 * the user's GITLAB_USER_*), where included files come from (this commit, other projects the
 * user may read, allowed remote hosts, the templates directory), and what a push changed.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { Variable } from '../ci-config/ci-config.ts';
import type { IncludeSources, ProjectFile } from '../ci-config/includes.ts';
import { namesReleasedVersion, releasedVersion, type ComponentFile } from '../ci-config/components.ts';
import { releaseTags } from '../releases/releases.queries.ts';
import type { SelectContext } from '../ci-config/select.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { findProjectByIdOrPath } from '../projects/projects.queries.ts';
import { findUserById } from '../users/users.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { visibilityName } from '../permissions/access.ts';
import { refSlug, serverAddressVariables } from '../runners/predefined-variables.ts';
import { repositoryPath } from '../repositories/storage.ts';
import type { CiEnv } from './ci-env.ts';
import { isProtectedRefOf } from '../protected-refs/protected-refs.ts';
import { MERGE_REQUEST_EVENT, mergeRequestVariables } from './merge-request-variables.ts';
import { changedPaths, listTree, readFileAt, resolveCommitish, resolveRef, type CommitData } from './git-source.ts';
import { builtinCiTemplate } from '../templates/templates.ts';

export interface ContextInput {
  project: ProjectRow;
  userId: number | null;
  ref: string;
  tag: boolean;
  sha: string;
  beforeSha: string;
  source: string;
  configPath: string;
  commit: CommitData;
  variables: Variable[];
  /** A merge request pipeline's request. */
  mergeRequestId?: number | null;
}

export async function projectFullPath(env: CiEnv, project: ProjectRow): Promise<string> {
  const ns = (await namespacePathsById(env.db, [project.namespace_id])).get(project.namespace_id);
  return ns ? `${ns.fullPath}/${project.path}` : project.path;
}

/** The variables `rules:if` sees before any job's own (in the Service's order, later ones winning). */
export async function creationVariables(env: CiEnv, c: ContextInput, fullPath: string): Promise<Map<string, string>> {
  const vars = new Map<string, string>();
  const set = (k: string, v: string) => vars.set(k, v);
  const namespace = fullPath.includes('/') ? fullPath.slice(0, fullPath.lastIndexOf('/')) : '';
  set('CI', 'true');
  set('GITLAB_CI', 'true');
  set('CI_SERVER', 'yes');
  set('CI_SERVER_URL', env.externalUrl);
  for (const [key, value] of serverAddressVariables(env.externalUrl)) set(key, value);
  set('CI_API_V4_URL', `${env.externalUrl}/api/v4`);
  set('CI_PROJECT_ID', String(c.project.id));
  set('CI_PROJECT_NAME', c.project.path);
  set('CI_PROJECT_TITLE', c.project.name);
  set('CI_PROJECT_PATH', fullPath);
  set('CI_PROJECT_PATH_SLUG', refSlug(fullPath));
  set('CI_PROJECT_NAMESPACE', namespace);
  set('CI_PROJECT_ROOT_NAMESPACE', fullPath.split('/')[0]);
  set('CI_PROJECT_URL', `${env.externalUrl}/${fullPath}`);
  // Where a runner checks the project out by default (its builds_dir), as rules may compare with it.
  set('CI_PROJECT_DIR', `/builds/${fullPath}`);
  set('CI_BUILDS_DIR', '/builds');
  set('CI_PROJECT_VISIBILITY', visibilityName(c.project.visibility_level));
  set('CI_DEFAULT_BRANCH', c.project.default_branch ?? '');
  set('CI_CONFIG_PATH', c.configPath);
  set('CI_PIPELINE_SOURCE', c.source);
  if (c.source === 'trigger' || c.source === 'pipeline' || c.source === 'parent_pipeline') set('CI_PIPELINE_TRIGGERED', 'true');
  set('CI_COMMIT_SHA', c.sha);
  set('CI_COMMIT_SHORT_SHA', c.sha.slice(0, 8));
  set('CI_COMMIT_BEFORE_SHA', c.beforeSha);
  // A merge request pipeline's ref is refs/merge-requests/:iid/head; its ref name is the source
  // branch and it is no branch pipeline (Ci::Pipeline#source_ref, #branch?).
  const mrVariables = await mergeRequestVariables(env.db, env.externalUrl, {
    projectId: c.project.id, ref: c.ref, tag: c.tag, sha: c.sha, source: c.source, mergeRequestId: c.mergeRequestId ?? null,
  });
  const refName = mrVariables.find(([k]) => k === 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME')?.[1] ?? c.ref;
  set('CI_COMMIT_REF_NAME', refName);
  set('CI_COMMIT_REF_SLUG', refSlug(refName));
  // Pipeline#protected_ref?: a protected branch or tag pattern covers the ref.
  set('CI_COMMIT_REF_PROTECTED', String(await isProtectedRefOf(env.db, c.project.id, c.ref, c.tag)));
  if (c.tag) set('CI_COMMIT_TAG', c.ref);
  else if (c.source !== MERGE_REQUEST_EVENT) set('CI_COMMIT_BRANCH', c.ref);
  set('CI_COMMIT_MESSAGE', c.commit.message);
  set('CI_COMMIT_TITLE', c.commit.title);
  set('CI_COMMIT_DESCRIPTION', c.commit.message.includes('\n') ? c.commit.message.slice(c.commit.message.indexOf('\n') + 1).replace(/^\n+/, '') : '');
  set('CI_COMMIT_AUTHOR', `${c.commit.author_name} <${c.commit.author_email}>`);
  set('CI_COMMIT_TIMESTAMP', c.commit.committed_date.replace(/\.\d{3}Z$/, '+00:00'));
  if (c.userId !== null) {
    const user = await findUserById(env.db, c.userId);
    if (user) {
      set('GITLAB_USER_ID', String(user.id));
      set('GITLAB_USER_LOGIN', user.username);
      set('GITLAB_USER_NAME', user.name);
      set('GITLAB_USER_EMAIL', user.email);
    }
  }
  for (const [key, value] of mrVariables) set(key, value);
  for (const v of c.variables) set(v.key, v.value);
  return vars;
}

/** Releases `~latest` chooses among: the most recently released, as many as any real project has. */
const MAX_RELEASED_VERSIONS = 1000;

function memo<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => (p ??= f());
}

export function includeSources(
  env: CiEnv, gitDir: string, sha: string, userId: number | null,
): IncludeSources & { tree: () => Promise<string[]> } {
  const tree = memo(() => listTree(gitDir, sha));
  const pipelineUser = memo(async () => (userId === null ? null : await findUserById(env.db, userId) ?? null));
  /** Another project by full path when the pipeline's user may read its code, with its git directory. */
  const readableProject = async (fullPath: string) => {
    const other = await findProjectByIdOrPath(env.db, fullPath);
    if (!other) return null;
    const ns = (await namespacePathsById(env.db, [other.namespace_id])).get(other.namespace_id);
    const actor = await projectActor(env.db, await pipelineUser(), other.id, ns?.lineage ?? []);
    if (!canOnProject(actor, 'download_code', other)) return null;
    return { project: other, gitDir: repositoryPath(env.storages, other.repository_storage, other.disk_path) };
  };
  // One pipeline often includes one component many times with other inputs: read it once.
  const components = new Map<string, Promise<ComponentFile>>();
  const filesAt = (dir: string, at: string) => ({
    readLocal: (p: string) => readFileAt(dir, at, p), listLocal: memo(() => listTree(dir, at)),
  });
  return {
    tree,
    readLocal: (p) => readFileAt(gitDir, sha, p),
    listLocal: tree,
    remoteHosts: env.remoteIncludeHosts,
    async readTemplate(name) {
      // The administrator's file of that name wins; kiln's own templates are there for the rest.
      if (env.templatesDir !== null) {
        const file = path.join(env.templatesDir, name);
        if (!file.startsWith(path.resolve(env.templatesDir) + path.sep)) return null;
        try {
          const stat = await fs.stat(file);
          if (stat.isFile() && stat.size <= 1024 * 1024) return await fs.readFile(file, 'utf8');
        } catch {
          // None there: the built-in one, if any.
        }
      }
      return builtinCiTemplate(name);
    },
    async readProject(fullPath, ref, file): Promise<ProjectFile> {
      // Names from the configuration reach the database and git: bounded, no control characters.
      if (fullPath.length > 1000 || file.length > 4096 || /[\x00-\x1f\x7f]/.test(fullPath)) return { error: 'project' };
      if (ref !== undefined && (ref.length > 1024 || /[\x00-\x1f\x7f]/.test(ref))) return { error: 'ref' };
      const other = await readableProject(fullPath);
      if (!other) return { error: 'project' };
      const target = ref ?? other.project.default_branch;
      if (!target) return { error: 'ref' };
      const at = (await resolveRef(other.gitDir, target))?.sha ?? await resolveCommitish(other.gitDir, target);
      if (!at) return { error: 'ref' };
      const content = await readFileAt(other.gitDir, at, file);
      if (content === null) return { error: 'file' };
      // A local include in that file means a file of that project, at that commit.
      return { content, local: filesAt(other.gitDir, at) };
    },
    serverFqdn: new URL(env.externalUrl).host,
    readComponent(projectPath, version, name): Promise<ComponentFile> {
      const id = JSON.stringify([projectPath, version, name]);
      let found = components.get(id);
      if (!found) components.set(id, found = readComponent(projectPath, version, name));
      return found;
    },
  };

  async function readComponent(projectPath: string, version: string, name: string): Promise<ComponentFile> {
    if (projectPath.length > 1000 || /[\x00-\x1f\x7f]/.test(projectPath)) return { error: 'project' };
    if (version.length > 1024 || name.length > 255 || /[\x00-\x1f\x7f]/.test(version + name)) return { error: 'content' };
    const other = await readableProject(projectPath);
    if (!other) return { error: 'project' };
    // `~latest` and `1.2` name a released version (components.ts); only they need the releases.
    const released = namesReleasedVersion(version)
      ? releasedVersion(version, await releaseTags(env.db, other.project.id, MAX_RELEASED_VERSIONS))
      : null;
    // Any other version is a tag, a branch or a commit, as git resolves a revision (the Service's
    // project.commit(version)): one git process. `~latest` without a release resolves to nothing
    // (git refuses `~` in a ref): "content not found".
    const at = await resolveCommitish(other.gitDir, released ?? version);
    if (!at) return { error: 'content' };
    for (const file of [`templates/${name}.yml`, `templates/${name}/template.yml`]) {
      const content = await readFileAt(other.gitDir, at, file);
      if (content !== null) return { content, local: filesAt(other.gitDir, at) };
    }
    return { error: 'content' };
  }
}

export function selectContext(
  env: CiEnv, gitDir: string, c: ContextInput, fullPath: string, predefined: Map<string, string>,
  tree: () => Promise<string[]>,
): SelectContext {
  const pushDiff = memo(() => changedPaths(gitDir, c.beforeSha, c.sha));
  return {
    predefined,
    callerVariables: c.variables,
    source: c.source,
    ref: c.ref,
    tag: c.tag,
    projectFullPath: fullPath,
    async changedPaths(compareTo) {
      if (compareTo !== undefined) {
        const base = await resolveCommitish(gitDir, compareTo);
        return base ? changedPaths(gitDir, base, c.sha) : null;
      }
      // A merge request pipeline compares with its diff's base (MergeRequest#modified_paths).
      const base = predefined.get('CI_MERGE_REQUEST_DIFF_BASE_SHA');
      if (c.source === MERGE_REQUEST_EVENT) return base ? changedPaths(gitDir, base, c.sha) : null;
      // Only a push to an existing branch has something to compare with.
      if (c.source !== 'push' || c.tag) return null;
      return pushDiff();
    },
    treePaths: tree,
  };
}
