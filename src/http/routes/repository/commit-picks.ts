/**
 * Cherry-picking a commit onto a branch and reverting it there (lib/api/commits.rb of the
 * Service 15.2, `cherry_pick` and `revert`): a new commit on the branch (201, the Commit entity),
 * or with `dry_run` only whether it would apply (200 `{"dry_run":"success"}`). A change that does
 * not apply is 400 with the Service's message and `error_code` (`conflict`, `empty`), plus
 * `"dry_run":"error"` on a dry run. The new commit goes through afterRefUpdate like a push.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { pickCommit, type PickAction } from '../../../domain/repositories/pick-commit.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { readCommit } from '../../../domain/repositories/git-read.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { ApiError, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { CommitSchema, presentCommit } from '../../entities/commit.ts';
import { authorizePushToBranch, loadCommit, loadRepository, repositoryReadOnly } from '../../loaders/repository.ts';
import type { Caller } from '../../auth/caller.ts';
import { route } from '../../route.ts';

const base = {
  id: P.string({ description: 'ID or URL-encoded full path of the project' }),
  sha: P.string({ maxLength: 1024, description: 'a commit id, or the name of a branch or tag' }),
  branch: P.name({ description: 'the branch to commit to' }),
  dry_run: P.optional(P.boolean({ default: false, description: 'only check that the change applies' })),
};
const cherryPickParams = defineParams({
  ...base,
  message: P.optional(P.string({ maxLength: MAX_MESSAGE_BYTES, description: 'the new commit\'s message' })),
});
const revertParams = defineParams(base);

const DryRunSchema = Type.Object({ dry_run: Type.Literal('success') }, { title: 'DryRun' });

const commitPicks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function pick(
    action: PickAction, request: FastifyRequest, reply: FastifyReply, caller: Caller,
    input: { id: string; sha: string; branch: string; dry_run: boolean; message?: string },
  ) {
    // Grape's `allow_blank: false`.
    if (input.branch.trim() === '') throw invalidParams(['branch is empty']);
    // authorize_push_to_branch! comes before the commit and the branch are looked up.
    const ctx = await loadRepository(request, input.id, 'branch');
    await authorizePushToBranch(request, ctx, caller.user, input.branch);
    const commit = await loadCommit(ctx, input.sha);
    const user = caller.user;
    const result = await pickCommit(db, ctx.repo, {
      action, commit, branch: input.branch, dryRun: input.dry_run, message: input.message || undefined,
      committer: { name: user.name, email: user.commit_email || user.email },
    });
    if (!result.ok) {
      if (result.reason === 'branch_not_found') throw notFound('Branch');
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(400, {
        message: result.message, ...(result.errorCode ? { error_code: result.errorCode } : {}),
        ...(input.dry_run ? { dry_run: 'error' } : {}),
      });
    }
    if (input.dry_run || !result.commitId || !result.update) {
      reply.code(200);
      return { dry_run: 'success' as const };
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    reply.code(201);
    return presentCommit((await readCommit(ctx.repo.gitDir, result.commitId))!, ctx.webUrl);
  }

  route(app, {
    method: 'POST', url: '/projects/:id/repository/commits/:sha/cherry_pick', auth: 'required', params: cherryPickParams,
    schema: { summary: 'Cherry-pick a commit onto a branch', tags: ['commits'], response: { 201: CommitSchema, 200: DryRunSchema } },
  }, ({ request, reply, input, caller }) => pick('cherry_pick', request, reply, caller, input));

  route(app, {
    method: 'POST', url: '/projects/:id/repository/commits/:sha/revert', auth: 'required', params: revertParams,
    schema: { summary: 'Revert a commit on a branch', tags: ['commits'], response: { 201: CommitSchema, 200: DryRunSchema } },
  }, ({ request, reply, input, caller }) => pick('revert', request, reply, caller, input));
};

export default commitPicks;
