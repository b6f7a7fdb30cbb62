/**
 * The project and repository a repository-content route works on: the project as the viewer may
 * see it (404 otherwise, loaders/containers.ts), then `download_code` to read its content or
 * `push_code` to write (403, the Service's `authorize!`), and the repository's location.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../../db/types.ts';
import { authorizeProject, loadProject, type ProjectContext } from './containers.ts';
import { projectRepository, type ProjectRepository } from '../../domain/repositories/project-repository.ts';
import { readCommit, readCommits, resolveCommit, type CommitInfo } from '../../domain/repositories/git-read.ts';
import { readableRevision } from '../../domain/repositories/ref-names.ts';
import { canOnProject } from '../../domain/permissions/project.policy.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { READ_ONLY_MESSAGE } from '../../domain/repositories/repositories.ts';
import { presentCommit, type Commit } from '../entities/commit.ts';
import { protectionRulesFor, refActorFor } from '../../domain/protected-refs/protected-refs.ts';
import { PUSH_INTO_BRANCH_DENIED, type ProtectionRules, type RefActor } from '../../domain/protected-refs/ref-rules.ts';
import { canPushToBranchOf } from '../../domain/merge-requests/fork-source.ts';

export interface RepositoryContext extends ProjectContext {
  repo: ProjectRepository;
  webUrl: string;
  canPush: boolean;
}

/**
 * `need: 'write'` refuses callers who may not push with 403; `denial` is the reason the Service
 * gives for the route (`You are not allowed to push into this branch` for files). `need: 'branch'`
 * leaves the decision to authorizePushToBranch, for the routes whose only check is the branch's
 * (the Service's commits, cherry-pick and revert: authorize_push_to_branch!, where a request's
 * collaboration also counts).
 */
export async function loadRepository(
  request: FastifyRequest, idOrPath: string, need: 'read' | 'write' | 'branch', denial?: string,
): Promise<RepositoryContext> {
  const ctx = await loadProject(request, idOrPath);
  authorizeProject(ctx, 'download_code');
  const canPush = canOnProject(ctx.actor, 'push_code', ctx.project);
  if (need === 'write' && !canPush) throw forbidden(denial);
  // Refused before any object is written: a move may be copying the repository. The ref update
  // checks again under the row lock (project-repository.ts), which is what makes it safe.
  if (need !== 'read' && ctx.project.read_only === 1) throw repositoryReadOnly();
  const { config } = request.server.kiln;
  return {
    ...ctx,
    repo: projectRepository(config.storages, ctx.project),
    webUrl: `${config.externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`,
    canPush,
  };
}

/** The caller as the project's protected branches and tags judge them. */
export function refActorOf(ctx: ProjectContext): RefActor | null {
  return refActorFor(ctx.actor, ctx.project);
}

/**
 * authorize_push_to_branch!: 403 `You are not allowed to push into this branch` unless the caller
 * may push to the branch (UserAccess#can_push_to_branch?: push_code and the branch's protection,
 * or an open request from the branch allowing collaboration, fork-source.ts canPushToBranchOf).
 */
export async function authorizePushToBranch(
  request: FastifyRequest, ctx: RepositoryContext, user: UserRow, branch: string,
): Promise<ProtectionRules> {
  const rules = await protectionRulesFor(request.server.kiln.db, ctx.project.id);
  const judge = { rules, refActor: refActorOf(ctx) };
  if (!await canPushToBranchOf(request.server.kiln.db, user, ctx.project, branch, judge)) {
    throw forbidden(PUSH_INTO_BRANCH_DENIED);
  }
  return rules;
}

/**
 * A write refused because the repository is moving to another storage: the conflict kiln answers
 * for every write during a move (routes/projects.ts), in the git layer's words.
 */
export const repositoryReadOnly = () => conflict(READ_ONLY_MESSAGE);

/** Commit entities for several commit ids in one git process. */
export async function presentCommits(ctx: RepositoryContext, ids: string[]): Promise<Map<string, Commit>> {
  const commits: Map<string, CommitInfo> = await readCommits(ctx.repo.gitDir, ids);
  return new Map([...commits].map(([id, c]) => [id, presentCommit(c, ctx.webUrl)]));
}

/** The commit a `:sha` path segment names (a commit id, a branch or a tag), or 404 Commit Not Found. */
export async function loadCommit(ctx: RepositoryContext, sha: string): Promise<CommitInfo> {
  const id = readableRevision(sha) ? await resolveCommit(ctx.repo.gitDir, sha) : null;
  const commit = id ? await readCommit(ctx.repo.gitDir, id) : null;
  if (!commit) throw notFound('Commit');
  return commit;
}
