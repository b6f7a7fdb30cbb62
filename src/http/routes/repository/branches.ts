/**
 * Branches of a project's repository (the Service's API::Branches): list, show, create from a
 * ref (in an empty repository, after a first commit of an empty README.md, create-branch.ts),
 * delete. Reading needs `download_code`, writing `push_code`. A branch name in the path is
 * URL-encoded when it holds slashes. Every change goes through afterRefUpdate.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { listRefs, mergedBranches, refTarget, resolveCommit, type RefEntry } from '../../../domain/repositories/git-read.ts';
import { apiRefChangeRefusal, protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import { canPushToBranch, isProtectedBranch, matchingBranchRules } from '../../../domain/protected-refs/ref-rules.ts';
import { DEVELOPER } from '../../../domain/protected-refs/access-levels.ts';
import { deleteBranch } from '../../../domain/repositories/ref-writes.ts';
import { createBranchFromApi } from '../../../domain/repositories/create-branch.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { readableRevision, validRefName, ZERO_ID } from '../../../domain/repositories/ref-names.ts';
import { ApiError, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import { BranchSchema, presentBranch, type Branch } from '../../entities/branch.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { loadRepository, presentCommits, refActorOf, repositoryReadOnly, type RepositoryContext } from '../../loaders/repository.ts';
import { matchesRefSearch, MAX_REF_SEARCH } from './ref-search.ts';
import { route } from '../../route.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';

const listParams = defineParams({
  id: P.string(),
  search: P.optional(P.string({ description: 'part of the name; ^ anchors the start, $ the end' })),
  sort: P.optional(P.oneOf(['name_asc', 'updated_asc', 'updated_desc'] as const, { default: 'name_asc' })),
  ...paginationParams,
});
const oneParams = defineParams({ id: P.string(), branch: P.string() });
const createParams = defineParams({ id: P.string(), branch: P.string({ ownErrors: true }), ref: P.string() });

const branches: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function present(ctx: RepositoryContext, refs: RefEntry[]): Promise<Branch[]> {
    const defaultBranch = ctx.project.default_branch;
    const [commits, merged, rules] = await Promise.all([
      presentCommits(ctx, refs.map((r) => r.commitId)),
      defaultBranch && refs.length > 0 ? mergedBranches(
        ctx.repo.gitDir, `refs/heads/${defaultBranch}`,
      ) : Promise.resolve(new Set<string>()),
      protectionRulesFor(db, ctx.project.id),
    ]);
    const actor = refActorOf(ctx);
    // ProtectedBranch.developers_can?: a covering pattern's level is Developer.
    const developersCan = (name: string, action: 'push' | 'merge') => matchingBranchRules(rules, name)
      .some((b) => b[action].includes(DEVELOPER));
    return refs.map((r) => presentBranch(r.name, commits.get(r.commitId)!, {
      merged: r.name !== defaultBranch && merged.has(r.name), canPush: canPushToBranch(rules, actor, r.name),
      isDefault: r.name === defaultBranch, projectWebUrl: ctx.webUrl, protected: isProtectedBranch(rules, r.name),
      developersCanPush: developersCan(r.name, 'push'), developersCanMerge: developersCan(r.name, 'merge'),
    }));
  }

  async function findBranch(ctx: RepositoryContext, name: string): Promise<RefEntry> {
    const [ref] = validRefName(name) ? await listRefs(ctx.repo.gitDir, 'refs/heads/', name) : [];
    if (!ref) throw notFound('Branch');
    return ref;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/branches', auth: 'optional', params: listParams,
    schema: { summary: "A project's branches", tags: ['branches'], response: { 200: Type.Array(BranchSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    if (input.search && input.search.length > MAX_REF_SEARCH) return paginateArray(request, reply, []);
    let refs = await listRefs(ctx.repo.gitDir, 'refs/heads/');
    if (input.search) refs = refs.filter((r) => matchesRefSearch(r.name, input.search!));
    if (input.sort === 'name_asc') refs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    else {
      const direction = input.sort === 'updated_asc' ? 1 : -1;
      refs.sort((a, b) => (Date.parse(a.committedDate) - Date.parse(b.committedDate)) * direction || (a.name < b.name ? -1 : 1));
    }
    return present(ctx, paginateArray(request, reply, refs));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/branches/:branch', auth: 'optional', params: oneParams,
    schema: { summary: 'One branch', tags: ['branches'], response: { 200: BranchSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    return (await present(ctx, [await findBranch(ctx, input.branch)]))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/repository/branches', auth: 'required', params: createParams,
    schema: { summary: 'Create a branch from a ref', tags: ['branches'], response: { 201: BranchSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadRepository(request, input.id, 'write');
    // The new branch passes the pre-receive check as the Service's UserCreateBranch runs it (from the web).
    const target = validRefName(input.branch) && readableRevision(input.ref) ? await resolveCommit(ctx.repo.gitDir, input.ref) : null;
    // (A name already taken is refused for that first, by createBranch.)
    if (target && ctx.project.empty_repo !== 1 && !await refTarget(ctx.repo.gitDir, `refs/heads/${input.branch}`)) {
      const refusal = await apiRefChangeRefusal(db, {
        projectId: ctx.project.id, gitDir: ctx.repo.gitDir, actor: refActorOf(ctx), emptyRepo: false,
        defaultBranch: ctx.project.default_branch, ref: `refs/heads/${input.branch}`, oldrev: ZERO_ID, newrev: target,
      });
      if (refusal) throw new ApiError(400, { message: refusal });
    }
    const user = { name: caller.user.name, email: caller.user.commit_email || caller.user.email };
    const result = await createBranchFromApi(db, ctx.repo, {
      name: input.branch, ref: input.ref, defaultBranch: ctx.project.default_branch, user,
    });
    // What landed (the README of an empty repository) is followed up even when the branch is refused.
    const onPipelineError = (err: unknown) => request.log.error({ err }, 'could not create the pipelines of a ref update');
    await afterRefUpdate(ciEnvFrom(db, config), ctx.project, result.updates, caller.user.id, onPipelineError);
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(400, { message: result.message });
    }
    // The default branch may have just come to be (the first branch of an empty repository).
    const project = await findProjectById(db, ctx.project.id);
    reply.code(201);
    return (await present({ ...ctx, project: project ?? ctx.project }, [await findBranch(ctx, input.branch)]))[0];
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/repository/branches/:branch', auth: 'required', params: oneParams,
    schema: { summary: 'Delete a branch', tags: ['branches'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadRepository(request, input.id, 'write');
    const branch = await findBranch(ctx, input.branch);
    // destroy_conditionally!: the branch's last change is its commit's date.
    checkUnmodifiedSince(request, branch.committedDate);
    if (input.branch !== ctx.project.default_branch) {
      // Branches::DeleteService: the pre-receive check refuses a protected branch to all but Maintainers.
      const refusal = await apiRefChangeRefusal(db, {
        projectId: ctx.project.id, gitDir: ctx.repo.gitDir, actor: refActorOf(ctx), emptyRepo: false,
        defaultBranch: ctx.project.default_branch, ref: `refs/heads/${input.branch}`, oldrev: branch.commitId, newrev: ZERO_ID,
      });
      if (refusal) throw new ApiError(400, { message: refusal });
    }
    const result = await deleteBranch(db, ctx.repo, input.branch, ctx.project.default_branch);
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      if (result.reason === 'not_found') throw notFound('Branch');
      // Branches::DeleteService answers 405 for the default branch.
      throw new ApiError(result.reason === 'default_branch' ? 405 : 400, { message: result.message });
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], caller.user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    reply.code(204).send();
  });

};

export default branches;
