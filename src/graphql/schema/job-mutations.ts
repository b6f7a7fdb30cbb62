/**
 * `jobCancel`, `jobRetry`, `jobPlay` and `jobArtifactsDestroy` (the Service's
 * Mutations::Ci::Job::*), doing what the REST job actions and artifacts routes do through the
 * same domain functions (domain/jobs/job-actions.ts, job-artifacts.ts) under the same
 * permissions: update_build for the actions, admin_build (the Service's destroy_artifacts,
 * Maintainer) for deleting artifacts, as DELETE /projects/:id/jobs/:job_id/artifacts. Failures
 * the Service reports in the payload's `errors`.
 */
import { GraphQLError } from 'graphql';
import type { BuildRow } from '../../db/tables/ci.ts';
import { findJob } from '../../domain/jobs/jobs.queries.ts';
import { cancelJob, playJob, retryJob } from '../../domain/jobs/job-actions.ts';
import { deleteJobArtifacts } from '../../domain/jobs/job-artifacts.ts';
import type { ProjectAction } from '../../domain/permissions/project.policy.ts';
import { ciEnvFrom } from '../../domain/pipelines/ci-env.ts';
import type { ParsedGid } from '../global-id.ts';
import { isStorableText } from '../../db/constraints.ts';
import { assertMayWrite, canProject, projectById, resourceNotAvailable } from '../access.ts';
import type { GqlContext } from '../context.ts';

export const typeDefs = /* GraphQL */ `
  input CiVariableInput { key: String! value: String! }

  input JobCancelInput { clientMutationId: String id: CiBuildID! }
  type JobCancelPayload { clientMutationId: String errors: [String!]! job: CiJob }

  input JobRetryInput { clientMutationId: String id: CiBuildID! }
  type JobRetryPayload { clientMutationId: String errors: [String!]! job: CiJob }

  input JobPlayInput { clientMutationId: String id: CiBuildID! variables: [CiVariableInput!] }
  type JobPlayPayload { clientMutationId: String errors: [String!]! job: CiJob }

  input JobArtifactsDestroyInput { clientMutationId: String id: CiBuildID! }
  type JobArtifactsDestroyPayload { clientMutationId: String errors: [String!]! job: CiJob destroyedArtifactsCount: Int! }

  extend type Mutation {
    jobCancel(input: JobCancelInput!): JobCancelPayload
    jobRetry(input: JobRetryInput!): JobRetryPayload
    jobPlay(input: JobPlayInput!): JobPlayPayload
    jobArtifactsDestroy(input: JobArtifactsDestroyInput!): JobArtifactsDestroyPayload
  }
`;

/** Variable keys the Service accepts (Ci::JobVariable), as the REST play route checks them. */
const VARIABLE_KEY = /^[a-zA-Z0-9_]{1,255}$/;
const MAX_VARIABLES = 200;
const MAX_VALUE = 10_000;

/** The job, when the caller may do `action` on its project's builds; otherwise the Service's not-available error. */
async function actionableJob(ctx: GqlContext, id: number, action: ProjectAction = 'update_build'): Promise<BuildRow> {
  assertMayWrite(ctx);
  const job = await findJob(ctx.kiln.db, id);
  const project = job ? await projectById(ctx, job.project_id, 'read_build') : null;
  if (!job || !project || !await canProject(ctx, project, action)) throw resourceNotAvailable();
  return job;
}

type Input = { clientMutationId?: string | null; id: ParsedGid };

export const resolvers = {
  Mutation: {
    jobCancel: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const job = await actionableJob(ctx, input.id.id);
      const canceled = await cancelJob(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), job);
      return { clientMutationId: input.clientMutationId ?? null, errors: [], job: canceled };
    },
    jobRetry: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const job = await actionableJob(ctx, input.id.id);
      const result = await retryJob(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), job, ctx.viewer!.id);
      if (!result.ok) return { clientMutationId: input.clientMutationId ?? null, errors: ['Job cannot be retried'], job: null };
      return { clientMutationId: input.clientMutationId ?? null, errors: [], job: result.job };
    },
    jobPlay: async (_: unknown, { input }: { input: Input & { variables?: { key: string; value: string }[] | null } }, ctx: GqlContext) => {
      const variables = input.variables ?? [];
      if (variables.length > MAX_VARIABLES || variables.some((v) => v.value.length > MAX_VALUE || !isStorableText(v.value))) {
        throw new GraphQLError('variables are too many or too long');
      }
      const job = await actionableJob(ctx, input.id.id);
      if (variables.some((v) => !VARIABLE_KEY.test(v.key))) {
        return {
          clientMutationId: input.clientMutationId ?? null,
          errors: ["Job variables key can contain only letters, digits and '_'."], job: null,
        };
      }
      const result = await playJob(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), job, ctx.viewer!.id, variables);
      if (!result.ok) return { clientMutationId: input.clientMutationId ?? null, errors: ['Unplayable Job'], job: null };
      return { clientMutationId: input.clientMutationId ?? null, errors: [], job: result.job };
    },
    jobArtifactsDestroy: async (_: unknown, { input }: { input: Input }, ctx: GqlContext) => {
      const job = await actionableJob(ctx, input.id.id, 'admin_build');
      // A CiBuildID names a build; a bridge has no artifacts and is not found, as REST's
      // DELETE /projects/:id/jobs/:job_id/artifacts finds builds only.
      if (job.type !== 'build') throw resourceNotAvailable();
      const destroyedArtifactsCount = await deleteJobArtifacts(ciEnvFrom(ctx.kiln.db, ctx.kiln.config), job);
      return { clientMutationId: input.clientMutationId ?? null, errors: [], job, destroyedArtifactsCount };
    },
  },
};
