/**
 * `userPermissions` of users, projects, pipelines and jobs: what the caller may do, answered by
 * the project policy table (domain/permissions/project.policy.ts) that REST asks, nothing restated.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import type { ProjectAction } from '../../domain/permissions/project.policy.ts';
import { canProject } from '../access.ts';
import type { GqlContext } from '../context.ts';

export const typeDefs = /* GraphQL */ `
  type ProjectPermissions {
    readProject: Boolean!
    downloadCode: Boolean!
    pushCode: Boolean!
    adminProject: Boolean!
    archiveProject: Boolean!
    removeProject: Boolean!
    readProjectMember: Boolean!
    adminProjectMember: Boolean!
    createPipeline: Boolean!
    updatePipeline: Boolean!
  }
  type PipelinePermissions {
    adminPipeline: Boolean!
    destroyPipeline: Boolean!
    updatePipeline: Boolean!
  }
  type JobPermissions {
    readBuild: Boolean!
    readJobArtifacts: Boolean!
    updateBuild: Boolean!
  }

  type UserPermissions {
    createSnippet: Boolean!
  }

  extend type UserCore { userPermissions: UserPermissions! }
  extend type Project { userPermissions: ProjectPermissions! }
  extend type Pipeline { userPermissions: PipelinePermissions }
  extend type CiJob { userPermissions: JobPermissions }
`;

/** Field → the policy action that answers it. */
const PROJECT: Record<string, ProjectAction> = {
  readProject: 'read_project', downloadCode: 'download_code', pushCode: 'push_code', adminProject: 'update_project',
  archiveProject: 'archive_project', removeProject: 'delete_project', readProjectMember: 'read_members',
  adminProjectMember: 'admin_members', createPipeline: 'update_build', updatePipeline: 'update_build',
};
// The Service: admin_pipeline for maintainers, destroy_pipeline for owners, update_pipeline for developers.
const PIPELINE: Record<string, ProjectAction> = {
  adminPipeline: 'admin_build', destroyPipeline: 'delete_project', updatePipeline: 'update_build',
};
const JOB: Record<string, ProjectAction> = { readBuild: 'read_build', readJobArtifacts: 'read_build', updateBuild: 'update_build' };

function answers(table: Record<string, ProjectAction>) {
  return Object.fromEntries(Object.entries(table).map(([field, action]) => [
    field, (p: { project: ProjectRow }, _: unknown, ctx: GqlContext) => canProject(ctx, p.project, action),
  ]));
}

async function ofProject(ctx: GqlContext, projectId: number): Promise<{ project: ProjectRow } | null> {
  const project = await ctx.loaders.projects.load(projectId);
  return project ? { project } : null;
}

export const resolvers = {
  // Any signed-in user may create a personal snippet (REST POST /snippets asks only for a user).
  UserPermissions: { createSnippet: (_: unknown, __: unknown, ctx: GqlContext) => ctx.viewer !== null },
  UserCore: { userPermissions: () => ({}) },
  ProjectPermissions: answers(PROJECT),
  PipelinePermissions: answers(PIPELINE),
  JobPermissions: answers(JOB),
  Project: { userPermissions: (p: ProjectRow) => ({ project: p }) },
  Pipeline: { userPermissions: (p: PipelineRow, _: unknown, ctx: GqlContext) => ofProject(ctx, p.project_id) },
  CiJob: { userPermissions: (j: BuildRow, _: unknown, ctx: GqlContext) => ofProject(ctx, j.project_id) },
};
