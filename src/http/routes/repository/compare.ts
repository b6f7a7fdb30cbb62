/**
 * Comparing refs and finding their merge base (the Service 15.2's GET /projects/:id/repository/
 * compare and …/merge_base, lib/api/repositories.rb), read with download_code.
 */
import type { FastifyPluginAsync } from 'fastify';
import { compare, readMergeBase, resolveAll } from '../../../domain/repositories/compare.ts';
import { MAX_REF_NAME, readableRevision } from '../../../domain/repositories/ref-names.ts';
import { ApiError, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { CommitSchema, presentCommit } from '../../entities/commit.ts';
import { CompareSchema, presentCompare } from '../../entities/repository-compare.ts';
import { loadRepository } from '../../loaders/repository.ts';
import { route } from '../../route.ts';

const compareParams = defineParams({
  id: P.string(),
  from: P.string({ maxLength: MAX_REF_NAME, description: 'the commit, branch or tag to start from' }),
  to: P.string({ maxLength: MAX_REF_NAME, description: 'the commit, branch or tag to stop at' }),
  from_project_id: P.optional(P.integer({ description: 'the project to compare from (this project or a fork relative)' })),
  straight: P.optional(P.boolean({ default: false, description: 'true: from..to; false: against the merge base (from...to)' })),
});

/** More refs than anyone merges at once; the Service sets no bound, kiln bounds the git command line. */
const MAX_MERGE_BASE_REFS = 1000;

const mergeBaseParams = defineParams({
  id: P.string(),
  refs: P.array(P.string({ maxLength: MAX_REF_NAME }), { commaSeparated: true, maxItems: MAX_MERGE_BASE_REFS }),
});

const compareRoutes: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/projects/:id/repository/compare', auth: 'optional', params: compareParams,
    schema: { summary: 'Compare two branches, tags or commits', tags: ['repositories'], response: { 200: CompareSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    // kiln has no forks: the only project a compare may start from is this one (the Service's
    // MergeRequestTargetProjectFinder finds the project's fork network, itself included).
    if (input.from_project_id !== undefined && input.from_project_id !== ctx.project.id) {
      throw new ApiError(400, { message: `Target project id:${input.from_project_id} is not a fork of project id:${input.id}` });
    }
    if (!readableRevision(input.to)) throw notFound('Ref');
    // A `from` that names no commit compares nothing (Gitlab::Git::Compare), it is not an error.
    const result = await compare(ctx.repo.gitDir, readableRevision(input.from) ? input.from : null, input.to, input.straight);
    if (!result) throw notFound('Ref');
    return presentCompare(result, ctx.webUrl, input.straight, input.from);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/merge_base', auth: 'optional', params: mergeBaseParams,
    schema: { summary: 'The common ancestor of two or more refs', tags: ['repositories'], response: { 200: CommitSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    // `refs=` (empty) is Grape's nil: no refs at all.
    const refs = input.refs ?? [];
    if (refs.length < 2) throw new ApiError(400, { message: 'Provide at least 2 refs' });
    const shas = await resolveAll(ctx.repo.gitDir, refs.map((r) => (readableRevision(r) ? r : null)));
    const unknown = refs.filter((_, i) => shas[i] === null);
    if (unknown.length > 0) {
      throw new ApiError(400, { message: `Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}` });
    }
    const commit = await readMergeBase(ctx.repo.gitDir, shas as string[]);
    if (!commit) throw notFound('Merge Base');
    return presentCommit(commit, ctx.webUrl);
  });
};

export default compareRoutes;
