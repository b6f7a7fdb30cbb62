/**
 * The repository's contributors (the Service 15.2's GET /projects/:id/repository/contributors,
 * Repository#contributors over the default branch), paged by offset; an empty repository has none.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { contributors } from '../../../domain/repositories/contributors.ts';
import { resolveCommit } from '../../../domain/repositories/git-read.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginateArray, paginationParams } from '../../lists/pagination.ts';
import { ContributorSchema, presentContributor } from '../../entities/repository-compare.ts';
import { loadRepository } from '../../loaders/repository.ts';
import { route } from '../../route.ts';

const contributorParams = defineParams({
  id: P.string(),
  order_by: P.optional(P.oneOf(['email', 'name', 'commits'] as const, { default: 'commits' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc' })),
  ...paginationParams,
});

const contributorRoutes: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/projects/:id/repository/contributors', auth: 'optional', params: contributorParams,
    schema: { summary: 'Who committed to the default branch', tags: ['repositories'], response: { 200: Type.Array(ContributorSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const head = await resolveCommit(ctx.repo.gitDir, ctx.project.default_branch ? `refs/heads/${ctx.project.default_branch}` : 'HEAD');
    const list = head ? await contributors(ctx.repo.gitDir, head, input.order_by, input.sort) : [];
    return paginateArray(request, reply, list.map(presentContributor));
  });
};

export default contributorRoutes;
