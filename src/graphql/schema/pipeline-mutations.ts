/**
 * `pipelineCancel`, `pipelineRetry` and `pipelineDestroy` (the Service's Mutations::Ci::Pipeline::*,
 * 15.2), doing what the REST pipeline actions do (routes/pipeline-actions.ts) through the same
 * domain functions (domain/pipelines/pipeline-actions.ts) under the same permissions: cancel and
 * retry take update_pipeline (kiln's update_build, Developer), destroy takes destroy_pipeline
 * (Owner). A pipeline that is missing, or whose project the caller may not act on, is the
 * Service's top-level "resource not available" error; what the Service reports in the payload's
 * `errors` is reported there.
 */
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { ProjectAction } from '../../domain/permissions/project.policy.ts';
import { ciEnvFrom } from '../../domain/pipelines/ci-env.ts';
import { cancelPipeline, deletePipeline, isPipelineCancelable, retryPipeline } from '../../domain/pipelines/pipeline-actions.ts';
import { findPipeline } from '../../domain/pipelines/pipelines.queries.ts';
import type { ParsedGid } from '../global-id.ts';
import { assertMayWrite, canProject, projectById, resourceNotAvailable } from '../access.ts';
import type { GqlContext } from '../context.ts';

export const typeDefs = /* GraphQL */ `
  input PipelineCancelInput { clientMutationId: String id: CiPipelineID! }
  type PipelineCancelPayload { clientMutationId: String errors: [String!]! }

  input PipelineRetryInput { clientMutationId: String id: CiPipelineID! }
  type PipelineRetryPayload { clientMutationId: String errors: [String!]! pipeline: Pipeline }

  input PipelineDestroyInput { clientMutationId: String id: CiPipelineID! }
  type PipelineDestroyPayload { clientMutationId: String errors: [String!]! }

  extend type Mutation {
    pipelineCancel(input: PipelineCancelInput!): PipelineCancelPayload
    pipelineRetry(input: PipelineRetryInput!): PipelineRetryPayload
    pipelineDestroy(input: PipelineDestroyInput!): PipelineDestroyPayload
  }
`;

/**
 * The pipeline, when the caller may read its project's builds and do `action` there (as REST's
 * load + authorizeProject); otherwise the Service's not-available error, which does not tell a
 * missing pipeline from a hidden one.
 */
async function actionablePipeline(ctx: GqlContext, id: number, action: ProjectAction): Promise<PipelineRow> {
  assertMayWrite(ctx);
  const pipeline = await findPipeline(ctx.kiln.db, id);
  const project = pipeline ? await projectById(ctx, pipeline.project_id, 'read_build') : null;
  if (!pipeline || !project || !await canProject(ctx, project, action)) throw resourceNotAvailable();
  return pipeline;
}

type Input = { clientMutationId?: string | null; id: ParsedGid };

export const resolvers = {
  Mutation: {
    pipelineCancel: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const pipeline = await actionablePipeline(ctx, input.id.id, 'update_build');
      const env = ciEnvFrom(ctx.kiln.db, ctx.kiln.config);
      // Mutations::Ci::Pipeline::Cancel reports a pipeline with nothing to cancel in the payload.
      if (!await isPipelineCancelable(env, pipeline)) {
        return { clientMutationId: input.clientMutationId ?? null, errors: ['Pipeline is not cancelable'] };
      }
      await cancelPipeline(env, pipeline);
      return { clientMutationId: input.clientMutationId ?? null, errors: [] };
    },
    pipelineRetry: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const pipeline = await actionablePipeline(ctx, input.id.id, 'update_build');
      // Ci::RetryPipelineService retries what it can and reports nothing when there is nothing to
      // retry: the payload carries the pipeline as it now is, with no errors.
      const retried = await retryPipeline(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), pipeline, ctx.viewer!.id);
      return { clientMutationId: input.clientMutationId ?? null, errors: [], pipeline: retried };
    },
    pipelineDestroy: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const pipeline = await actionablePipeline(ctx, input.id.id, 'destroy_pipeline');
      await deletePipeline(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), pipeline);
      return { clientMutationId: input.clientMutationId ?? null, errors: [] };
    },
  },
};
