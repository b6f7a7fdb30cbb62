/**
 * A project's CI reads (the Service's Project fields): `pipelines(status, scope, ref, sha, source)`,
 * `pipeline(iid|id|sha)`, `jobs(statuses)` and `job(id)`, each behind read_build as REST.
 */
import { GraphQLError } from 'graphql';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { findPipelineInProject, projectPipelinesQuery } from '../../domain/pipelines/pipelines.queries.ts';
import { findLatestPipelineForSha, findPipelineByIid } from '../../domain/pipelines/pipelines-batch.queries.ts';
import { findJobInProject, projectJobsQuery } from '../../domain/jobs/jobs.queries.ts';
import type { ParsedGid } from '../global-id.ts';
import { connectionFromQuery, type ConnectionArgs } from '../connection.ts';
import { canProject } from '../access.ts';
import type { GqlContext } from '../context.ts';
import { filterText, jobStatuses } from './ci.ts';

export const typeDefs = /* GraphQL */ `
  extend type Project {
    pipelines(status: PipelineStatusEnum, scope: PipelineScopeEnum, ref: String, sha: String, source: String,
      after: String, before: String, first: Int, last: Int): PipelineConnection
    pipeline(iid: ID, id: CiPipelineID, sha: String): Pipeline
    jobs(statuses: [CiJobStatus!], after: String, before: String, first: Int, last: Int): CiJobConnection
    job(id: JobID!): CiJob
  }
`;

export const resolvers = {
  Project: {
    pipelines: async (
      p: ProjectRow,
      args: ConnectionArgs & {
        status?: string | null; scope?: string | null; ref?: string | null; sha?: string | null;
        source?: string | null;
      },
      ctx: GqlContext,
    ) => {
      if (!await canProject(ctx, p, 'read_build')) return null;
      const query = projectPipelinesQuery(ctx.kiln.db, p.id, {
        status: args.status?.toLowerCase(), scope: args.scope?.toLowerCase(),
        ref: filterText(args.ref, 'ref'), sha: filterText(args.sha, 'sha'), source: filterText(
          args.source, 'source',
        ), orderBy: 'id', sort: 'desc',
      });
      return connectionFromQuery(query, args, 'desc');
    },
    pipeline: async (p: ProjectRow, args: { iid?: string | null; id?: ParsedGid | null; sha?: string | null }, ctx: GqlContext) => {
      if (!await canProject(ctx, p, 'read_build')) return null;
      const db = ctx.kiln.db;
      if (args.id) return await findPipelineInProject(db, p.id, args.id.id) ?? null;
      if (typeof args.iid === 'string') {
        const iid = /^[0-9]{1,10}$/.test(args.iid) ? Number(args.iid) : NaN;
        return iid <= 2 ** 31 - 1 ? await findPipelineByIid(db, p.id, iid) ?? null : null;
      }
      if (typeof args.sha === 'string') return await findLatestPipelineForSha(db, p.id, filterText(args.sha, 'sha')!) ?? null;
      throw new GraphQLError('Provide one of iid, id or sha');
    },
    jobs: async (p: ProjectRow, args: ConnectionArgs & { statuses?: string[] | null }, ctx: GqlContext) => {
      if (!await canProject(ctx, p, 'read_build')) return null;
      return connectionFromQuery(projectJobsQuery(ctx.kiln.db, p.id, jobStatuses(args.statuses)), args, 'desc');
    },
    job: async (p: ProjectRow, args: { id: ParsedGid }, ctx: GqlContext) => {
      if (!await canProject(ctx, p, 'read_build')) return null;
      return await findJobInProject(ctx.kiln.db, p.id, args.id.id) ?? null;
    },
  },
};
