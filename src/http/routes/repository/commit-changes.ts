/**
 * What a commit changed, where it is and who signed it (lib/api/commits.rb of the Service 15.2):
 * its diff file by file within the application's diff limits, the branches and tags that contain
 * it, the merge requests that hold it, and its GPG signature checked against the users' GPG keys
 * (domain/gpg-keys/commit-signature.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { commitDiffs, refsContaining } from '../../../domain/repositories/commit-diff.ts';
import { verifyCommitSignature } from '../../../domain/gpg-keys/commit-signature.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginateArray, paginationParams } from '../../lists/pagination.ts';
import { forbidden, notFound } from '../../errors.ts';
import { CommitSignatureSchema, presentCommitSignature } from '../../entities/commit-signature.ts';
import { BasicRefSchema, DiffSchema, presentDiff } from '../../entities/diff.ts';
import { loadCommit, loadRepository } from '../../loaders/repository.ts';
import { mergeRequestsWithCommit } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { MergeRequestBasicSchema } from '../../entities/merge-request.ts';
import { presentMergeRequestsFor } from '../../loaders/merge-request-presenting.ts';
import { route } from '../../route.ts';

const base = {
  id: P.string({ description: 'ID or URL-encoded full path of the project' }),
  sha: P.string({ maxLength: 1024, description: 'a commit id, or the name of a branch or tag' }),
};
const diffParams = defineParams({ ...base, ...paginationParams });
const signatureParams = defineParams(base);
const mergeRequestsParams = defineParams({ ...base, ...paginationParams });
const refsParams = defineParams({
  ...base,
  type: P.optional(P.oneOf(['branch', 'tag', 'all'] as const, { default: 'all', description: 'which refs' })),
  ...paginationParams,
});

const commitChanges: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/diff', auth: 'optional', params: diffParams,
    schema: { summary: "A commit's diff, file by file", tags: ['commits'], response: { 200: Type.Array(DiffSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const commit = await loadCommit(ctx, input.sha);
    const s = await currentSettings(db);
    const diffs = await commitDiffs(ctx.repo.gitDir, commit, {
      maxFiles: s.diff_max_files, maxLines: s.diff_max_lines, maxPatchBytes: s.diff_max_patch_bytes,
    });
    return paginateArray(request, reply, diffs).map(presentDiff);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/refs', auth: 'optional', params: refsParams,
    schema: { summary: 'The branches and tags that contain a commit', tags: ['commits'], response: { 200: Type.Array(BasicRefSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const commit = await loadCommit(ctx, input.sha);
    // Branches first, then tags (the Service concatenates the two lists in that order).
    const [branches, tags] = await Promise.all([
      input.type === 'tag' ? [] : refsContaining(ctx.repo.gitDir, commit.id, 'refs/heads/'),
      input.type === 'branch' ? [] : refsContaining(ctx.repo.gitDir, commit.id, 'refs/tags/'),
    ]);
    const refs = [
      ...branches.map((name) => ({ type: 'branch' as const, name })),
      ...tags.map((name) => ({ type: 'tag' as const, name })),
    ];
    return paginateArray(request, reply, refs);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/merge_requests', auth: 'optional', params: mergeRequestsParams,
    schema: {
      summary: 'The merge requests that hold a commit', tags: ['commits'], response: { 200: Type.Array(MergeRequestBasicSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    // authorize! :read_merge_request before the commit is looked up.
    if (!canReadMergeRequest(ctx.actor, ctx.project)) throw forbidden();
    const commit = await loadCommit(ctx, input.sha);
    const rows = await paginate(db, request, reply, mergeRequestsWithCommit(db, ctx.project.id, commit.id));
    return presentMergeRequestsFor(request, rows, { project: ctx.project.id });
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/signature', auth: 'optional', params: signatureParams,
    schema: { summary: "A commit's GPG signature", tags: ['commits'], response: { 200: CommitSignatureSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const commit = await loadCommit(ctx, input.sha);
    const signature = await verifyCommitSignature(db, ctx.repo.gitDir, commit);
    if (!signature) throw notFound('Signature');
    return presentCommitSignature(signature);
  });
};

export default commitChanges;
