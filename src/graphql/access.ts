/**
 * Permission questions resolvers ask, answered by the domain's policy tables
 * (domain/permissions) exactly as REST asks them: no rule is restated here.
 */
import { GraphQLError } from 'graphql';
import type { ProjectRow } from '../db/tables/projects.ts';
import { canOnProject, type ProjectAction } from '../domain/permissions/project.policy.ts';
import type { GqlContext } from './context.ts';

/** The Service's answer to a missing object or one the caller may not touch (Gitlab::Graphql::Authorize). */
export const RESOURCE_NOT_AVAILABLE = "The resource that you are attempting to access does not exist or you don't have "
  + "permission to perform this action";

export function resourceNotAvailable(): GraphQLError {
  return new GraphQLError(RESOURCE_NOT_AVAILABLE);
}

export async function canProject(ctx: GqlContext, project: ProjectRow, action: ProjectAction): Promise<boolean> {
  const actor = await ctx.loaders.projectActors.load(project.id);
  return canOnProject(actor, action, project);
}

export async function projectById(ctx: GqlContext, id: number, action: ProjectAction = 'read_project'): Promise<ProjectRow | null> {
  const project = await ctx.loaders.projects.load(id);
  if (!project || project.pending_delete) return null;
  return await canProject(ctx, project, action) ? project : null;
}

/** Self or an administrator: who sees a user's emails and memberships (as REST's /user/emails, /users/:id/memberships). */
export function isSelfOrAdmin(ctx: GqlContext, userId: number): boolean {
  const viewer = ctx.viewer;
  return viewer !== null && (viewer.id === userId || viewer.admin === 1);
}

/**
 * Mutations need a credential that may write: the `api` scope, or a signed-in session whose
 * request carried its CSRF token (authentication drops the session otherwise). `read_api`
 * tokens may only query (issue 18, item 1).
 */
export function assertMayWrite(ctx: GqlContext): void {
  const caller = ctx.caller;
  if (!caller) throw resourceNotAvailable();
  const c = caller.credential;
  if (c.kind === 'session') return;
  if (!c.scopes.includes('api')) throw resourceNotAvailable();
}
