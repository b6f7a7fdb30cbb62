/**
 * CI test set-up: a project made through the API, and `.gitlab-ci.yml` (with any other files)
 * committed with the real git CLI in a scratch clone and pushed into the project's bare repository.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import type { ProjectRow } from '../../src/db/tables/projects.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';
import { inspectRepository } from '../../src/domain/repositories/repositories.ts';
import { recordPush } from '../../src/domain/projects/projects.queries.ts';
import { protectDefaultBranch } from '../../src/domain/protected-refs/protected-refs.ts';
import { createToken, createUser } from './factories.ts';
import type { TestApp } from './app.ts';

export interface CiProject {
  project: ProjectRow;
  owner: UserRow;
  ownerToken: string;
  /** `namespace/path`. */
  fullPath: string;
  gitDir: string;
}

let seq = 0;

export async function createCiProject(t: TestApp, o: { owner?: UserRow; visibility?: 'private' | 'internal' | 'public'; name?: string } = {}): Promise<CiProject> {
  seq += 1;
  const owner = o.owner ?? await createUser(t.db);
  const ownerToken = await createToken(t.db, owner, { scopes: ['api'] });
  const res = await t.request({
    method: 'POST', url: '/api/v4/projects', token: ownerToken,
    payload: { name: o.name ?? `ci-project-${process.pid}-${seq}`, visibility: o.visibility ?? 'private' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json() as { id: number; path_with_namespace: string };
  const project = await t.db.selectFrom('projects').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
  return { project, owner, ownerToken, fullPath: body.path_with_namespace, gitDir: repositoryPath(t.config.storages, project.repository_storage, project.disk_path) };
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Ada Lovelace', GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Lovelace', GIT_COMMITTER_EMAIL: 'ada@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
}

function branchExists(gitDir: string, branch: string): boolean {
  try {
    execFileSync('git', ['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { env: GIT_ENV, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Commits `files` on `branch` (on top of what the branch holds) with the git CLI and pushes it;
 * returns the commit id. `tag` also pushes a tag of that name at the commit.
 */
export async function pushFiles(t: TestApp, p: CiProject, files: Record<string, string>, o: { branch?: string; message?: string; tag?: string } = {}): Promise<string> {
  const branch = o.branch ?? 'main';
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ci-work-'));
  try {
    git(work, 'init', '--quiet', `--initial-branch=${branch}`);
    git(work, 'remote', 'add', 'origin', p.gitDir);
    if (branchExists(p.gitDir, branch)) {
      git(work, 'fetch', '--quiet', 'origin', branch);
      git(work, 'checkout', '--quiet', '-B', branch, 'FETCH_HEAD');
    }
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      fs.writeFileSync(path.join(work, name), content);
    }
    git(work, 'add', '--all');
    git(work, 'commit', '--quiet', '-m', o.message ?? 'Add CI configuration\n\nWith a body line.');
    git(work, 'push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`);
    if (o.tag) git(work, 'push', '--quiet', 'origin', `HEAD:refs/tags/${o.tag}`);
    const sha = git(work, 'rev-parse', 'HEAD');
    const state = await inspectRepository(p.gitDir, null);
    await recordPush(t.db, p.project.id, state);
    // As after a push over HTTP, the default branch is protected once it exists (smart-http.ts).
    await protectDefaultBranch(t.db, { id: p.project.id, default_branch: state.defaultBranch });
    return sha;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export async function createPipeline(t: TestApp, p: CiProject, ref = 'main', token = p.ownerToken) {
  const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=${encodeURIComponent(ref)}`, token });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: number; status: string; sha: string; ref: string };
}

export async function pipelineJobs(t: TestApp, p: CiProject, pipelineId: number, query = '') {
  const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines/${pipelineId}/jobs?per_page=100${query}`, token: p.ownerToken });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { id: number; name: string; status: string; stage: string; failure_reason?: string }[];
}

/** name → status of a pipeline's (latest) jobs. */
export async function jobStatuses(t: TestApp, p: CiProject, pipelineId: number): Promise<Record<string, string>> {
  return Object.fromEntries((await pipelineJobs(t, p, pipelineId)).map((j) => [j.name, j.status]));
}
