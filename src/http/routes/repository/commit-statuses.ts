/**
 * Commit statuses (lib/api/commit_statuses.rb of the Service 15.2): the jobs of a commit's
 * pipelines (builds and external statuses alike), and an external CI system's report of a
 * commit's status, stored as a job of a pipeline (domain/pipelines/post-commit-status.ts).
 *
 * Both need a signed-in caller (`authenticate!`). Reading asks read_commit_status and reporting
 * create_commit_status and update_pipeline, which the Service grants as it grants reading and
 * updating builds (ProjectPolicy: Reporter, or anyone where builds are public; Developer), so
 * kiln asks read_build and update_build.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { commitStatusesQuery } from '../../../domain/pipelines/commit-statuses.queries.ts';
import { postCommitStatus, STATUS_STATES } from '../../../domain/pipelines/post-commit-status.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { ApiError, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { CommitStatusSchema, presentCommitStatus } from '../../entities/commit-status.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { loadCommit, type RepositoryContext } from '../../loaders/repository.ts';
import { route } from '../../route.ts';

const project = P.string({ description: 'ID or URL-encoded full path of the project' });
const sha = P.string({ maxLength: 1024, description: 'the commit id (a branch or tag name names the commit too)' });
const listParams = defineParams({
  id: project, sha,
  ref: P.optional(P.name({ description: 'only statuses of this ref' })),
  stage: P.optional(P.name({ description: 'only statuses of this stage' })),
  name: P.optional(P.name({ description: 'only statuses of this name' })),
  all: P.optional(P.boolean({ default: false, description: 'retried statuses too' })),
  ...paginationParams,
});
const postParams = defineParams({
  id: project, sha,
  state: P.oneOf(STATUS_STATES, { description: 'the status' }),
  ref: P.optional(P.name({ description: 'the ref (default: the pipeline\'s, else the first branch containing the commit)' })),
  target_url: P.optional(P.string({ maxLength: 4096, description: 'a link to the external status' })),
  description: P.optional(P.string({ maxLength: 65_535, description: 'a short description of the status' })),
  name: P.optional(P.name({ description: 'the status\'s label (default: "default")' })),
  context: P.optional(P.name({ description: 'the same as name' })),
  coverage: P.optional(P.number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE, description: 'the code coverage in percent' })),
  pipeline_id: P.optional(P.integer({ description: 'the pipeline of the commit to report in' })),
});

const commitStatuses: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function repositoryContext(request: Parameters<typeof loadProject>[0], id: string, action: 'read_build' | 'update_build') {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, action);
    const repo = projectRepository(config.storages, ctx.project);
    const webUrl = `${config.externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`;
    return { ...ctx, repo, webUrl, canPush: false } satisfies RepositoryContext;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha/statuses', auth: 'required', params: listParams,
    schema: { summary: "The statuses of a commit's pipelines", tags: ['commits'], response: { 200: Type.Array(CommitStatusSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await repositoryContext(request, input.id, 'read_build');
    await loadCommit(ctx, input.sha);
    const rows = await paginate(db, request, reply, commitStatusesQuery(db, ctx.project.id, input.sha, {
      ref: input.ref || undefined, stage: input.stage || undefined, name: input.name || undefined, all: input.all,
    }));
    const users = new Map((await findUsersByIds(db, [...new Set(rows.flatMap((r) => r.user_id ?? []))])).map((u) => [u.id, u]));
    return rows.map((r) => presentCommitStatus(r, r.pipeline_sha, users.get(r.user_id ?? 0) ?? null, config.externalUrl));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/statuses/:sha', auth: 'required', params: postParams,
    schema: { summary: "Report a commit's status from an external CI system", tags: ['commits'], response: { 201: CommitStatusSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await repositoryContext(request, input.id, 'update_build');
    const commit = await loadCommit(ctx, input.sha);
    // `params[:name] || params[:context] || 'default'`: a blank name given is kept, and refused (CommitStatus validates its presence).
    const name = input.name ?? input.context ?? 'default';
    if (name.trim() === '') throw validationFailed({ name: ["can't be blank"] });
    const result = await postCommitStatus(ciEnvFrom(db, config), {
      project: ctx.project, commitId: commit.id, state: input.state, ref: input.ref, pipelineId: input.pipeline_id,
      name, targetUrl: input.target_url, description: input.description,
      coverage: input.coverage, userId: caller.user.id,
    });
    if (!result.ok) {
      if (result.reason === 'no_ref') throw notFound('References for commit');
      if (result.reason === 'invalid') throw validationFailed(result.errors);
      throw new ApiError(400, { message: result.message });
    }
    reply.code(201);
    return presentCommitStatus(result.status, result.pipeline.sha, caller.user, config.externalUrl);
  });
};

export default commitStatuses;
