/**
 * Pipeline control (lib/api/ci/pipelines.rb, 15.2; issue 20 item 4): cancel (200), retry (201),
 * delete (204), the pipeline's variables, and the latest pipeline of a ref. Cancel and retry take
 * update_pipeline (Developer); delete takes the project's Owner; a pipeline's variables are for
 * Maintainers and for the Developer who created the pipeline (PipelinePolicy
 * read_pipeline_variable).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { cancelPipeline, deletePipeline, retryPipeline } from '../../../domain/pipelines/pipeline-actions.ts';
import { findPipelineInProject, latestJobCoverages } from '../../../domain/pipelines/pipelines.queries.ts';
import { pipelineCoverage } from '../../../domain/pipelines/pipeline-timing.ts';
import { latestPipelineFor } from '../../../domain/pipelines/latest-pipeline.ts';
import { projectGitDir } from '../../../domain/pipelines/create-pipeline.ts';
import { pipelineVariables } from '../../../domain/ci-variables/ci-variables.queries.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { isStorableId } from '../../../db/constraints.ts';
import type { PipelineRow } from '../../../db/tables/ci.ts';
import { forbidden, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { PipelineSchema, presentPipeline } from '../../entities/pipeline.ts';
import { PipelineVariableSchema, presentPipelineVariable } from '../../entities/ci-variable.ts';
import { projectWebUrl } from './pipelines.ts';
import { route } from '../../route.ts';

const pipelineParams = defineParams({ id: P.string(), pipeline_id: P.integer() });
const latestParams = defineParams({
  id: P.string(), ref: P.optional(P.string({ description: 'a branch; the default branch when absent' })),
});

const pipelineActions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  /** The project and the pipeline `:pipeline_id` names in it (`404 Not found` otherwise, as `find` answers). */
  async function load(
    request: FastifyRequest, input: { id: string; pipeline_id: number },
  ): Promise<{ ctx: ProjectContext; pipeline: PipelineRow }> {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const pipeline = isStorableId(input.pipeline_id) ? await findPipelineInProject(db, ctx.project.id, input.pipeline_id) : undefined;
    if (!pipeline) throw recordNotFound();
    return { ctx, pipeline };
  }

  async function present(ctx: ProjectContext, pipeline: PipelineRow) {
    const user = pipeline.user_id === null ? null : await findUserById(db, pipeline.user_id) ?? null;
    const coverage = pipelineCoverage(await latestJobCoverages(db, pipeline.id));
    return presentPipeline(pipeline, projectWebUrl(config.externalUrl, ctx), user, config.externalUrl, coverage);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines/latest', auth: 'optional', params: latestParams,
    schema: { summary: 'The latest pipeline of the head commit of a branch', tags: ['pipelines'], response: { 200: PipelineSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'read_build');
    const pipeline = await latestPipelineFor(db, projectGitDir(ciEnvFrom(db, config), ctx.project), ctx.project, input.ref);
    // The Service authorizes read_pipeline on a missing pipeline, which no one has: 403.
    if (!pipeline) throw forbidden();
    return present(ctx, pipeline);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipelines/:pipeline_id/cancel', auth: 'required', params: pipelineParams,
    schema: { summary: "Cancel a pipeline's running and pending jobs", tags: ['pipelines'], response: { 200: PipelineSchema } },
  }, async ({ request, reply, input }) => {
    const { ctx, pipeline } = await load(request, input);
    authorizeProject(ctx, 'update_build');
    const canceled = await cancelPipeline(ciEnvFrom(db, config), pipeline);
    return reply.code(200).send(await present(ctx, canceled));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/pipelines/:pipeline_id/retry', auth: 'required', params: pipelineParams,
    schema: { summary: "Retry a pipeline's failed and canceled jobs", tags: ['pipelines'], response: { 201: PipelineSchema } },
  }, async ({ request, reply, input, caller }) => {
    const { ctx, pipeline } = await load(request, input);
    authorizeProject(ctx, 'update_build');
    const retried = await retryPipeline(ciEnvFrom(db, config), pipeline, caller.user.id);
    return reply.code(201).send(await present(ctx, retried));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/pipelines/:pipeline_id', auth: 'required', params: pipelineParams,
    schema: { summary: 'Delete a pipeline with its jobs, logs and artifacts', tags: ['pipelines'] },
  }, async ({ request, reply, input }) => {
    const { ctx, pipeline } = await load(request, input);
    authorizeProject(ctx, 'destroy_pipeline');
    checkUnmodifiedSince(request, pipeline.updated_at);
    await deletePipeline(ciEnvFrom(db, config), pipeline);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/projects/:id/pipelines/:pipeline_id/variables', auth: 'optional', params: pipelineParams,
    schema: {
      summary: 'The variables a pipeline was created with', tags: ['pipelines'],
      response: { 200: Type.Array(PipelineVariableSchema) },
    },
  }, async ({ request, input, caller }) => {
    const { ctx, pipeline } = await load(request, input);
    const own = caller !== null && pipeline.user_id === caller.user.id && canOnProject(ctx.actor, 'update_build', ctx.project);
    if (!own && !canOnProject(ctx.actor, 'admin_build', ctx.project)) throw forbidden();
    const sealer = await sealerFor(config.dataDir);
    return (await pipelineVariables(db, pipeline.id)).map((r) => presentPipelineVariable(r, sealer.open(r.encrypted_value)));
  });
};

export default pipelineActions;
