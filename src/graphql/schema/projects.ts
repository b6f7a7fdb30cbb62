/**
 * Projects and groups: `project(fullPath)` with its pipelines and jobs (ci.ts), `group(fullPath)`
 * with `projects`. A project or group the caller may not read is `null`, as a missing one is.
 */
import { GraphQLError } from 'graphql';
import { boundedText, MAX_FULL_PATH, optionalText } from '../bounds.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { findProjectByIdOrPath } from '../../domain/projects/projects.queries.ts';
import { findProjects } from '../../domain/projects/project.finder.ts';
import { restrictProjects } from '../../domain/projects/projects-batch.queries.ts';
import { findNamespaceByFullPath, descendantGroupIds } from '../../domain/namespaces/namespaces.queries.ts';
import { canOnGroup } from '../../domain/permissions/group.policy.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { MODELS, parseGid, toGid } from '../global-id.ts';
import { connectionFromArray, connectionFromQuery, MAX_PAGE_SIZE, type ConnectionArgs } from '../connection.ts';
import { canProject } from '../access.ts';
import type { GqlContext, NamespaceInfo } from '../context.ts';
import { presentNamespace } from './users.ts';

export const typeDefs = /* GraphQL */ `
  type Project {
    id: ID!
    name: String!
    path: String!
    fullPath: ID!
    nameWithNamespace: String!
    description: String
    webUrl: String
    visibility: String
    archived: Boolean
    createdAt: Time
    lastActivityAt: Time
    namespace: Namespace
    group: Group
  }
  type ProjectEdge { cursor: String! node: Project }
  type ProjectConnection { edges: [ProjectEdge] nodes: [Project] pageInfo: PageInfo! count: Int! }

  type Group {
    id: ID!
    name: String!
    path: String!
    fullName: String!
    fullPath: ID!
    description: String
    visibility: String
    webUrl: String!
    parent: Group
    projects(includeSubgroups: Boolean = false, search: String,
      after: String, before: String, first: Int, last: Int): ProjectConnection!
  }

  extend type Query {
    "Find a project."
    project(fullPath: ID!): Project
    "Find a group."
    group(fullPath: ID!): Group
    "Find projects visible to the current user."
    projects(membership: Boolean, search: String, ids: [ID!],
      after: String, before: String, first: Int, last: Int): ProjectConnection
  }
`;


async function namespaceOf(ctx: GqlContext, p: ProjectRow): Promise<NamespaceInfo> {
  const info = await ctx.loaders.namespaces.load(p.namespace_id);
  if (!info) throw new GraphQLError(`Namespace ${p.namespace_id} of project ${p.id} is missing`);
  return info;
}

async function readableGroup(ctx: GqlContext, info: NamespaceInfo | null): Promise<NamespaceInfo | null> {
  if (!info || info.namespace.kind !== 'group') return null;
  const actor = await ctx.loaders.groupActors.load(info.namespace.id);
  return canOnGroup(actor, 'read_group', info.namespace) ? info : null;
}

export const resolvers = {
  Project: {
    id: (p: ProjectRow) => toGid(MODELS.project, p.id),
    fullPath: async (p: ProjectRow, _: unknown, ctx: GqlContext) => `${(await namespaceOf(ctx, p)).fullPath}/${p.path}`,
    nameWithNamespace: async (p: ProjectRow, _: unknown, ctx: GqlContext) => `${(await namespaceOf(ctx, p)).fullName} / ${p.name}`,
    webUrl: async (
      p: ProjectRow, _: unknown, ctx: GqlContext,
    ) => `${ctx.kiln.config.externalUrl}/${(await namespaceOf(ctx, p)).fullPath}/${p.path}`,
    visibility: (p: ProjectRow) => visibilityName(p.visibility_level),
    archived: (p: ProjectRow) => p.archived === 1,
    createdAt: (p: ProjectRow) => p.created_at,
    lastActivityAt: (p: ProjectRow) => p.last_activity_at,
    namespace: async (p: ProjectRow, _: unknown, ctx: GqlContext) => presentNamespace(await namespaceOf(ctx, p)),
    group: async (p: ProjectRow, _: unknown, ctx: GqlContext) => readableGroup(ctx, await namespaceOf(ctx, p)),
  },
  Group: {
    id: (g: NamespaceInfo) => toGid(MODELS.group, g.namespace.id),
    name: (g: NamespaceInfo) => g.namespace.name,
    path: (g: NamespaceInfo) => g.namespace.path,
    description: (g: NamespaceInfo) => g.namespace.description,
    visibility: (g: NamespaceInfo) => visibilityName(g.namespace.visibility_level),
    webUrl: (g: NamespaceInfo, _: unknown, ctx: GqlContext) => `${ctx.kiln.config.externalUrl}/groups/${g.fullPath}`,
    parent: async (g: NamespaceInfo, _: unknown, ctx: GqlContext) =>
      (g.namespace.parent_id === null ? null : readableGroup(ctx, await ctx.loaders.namespaces.load(g.namespace.parent_id))),
    projects: async (g: NamespaceInfo, args: ConnectionArgs & { includeSubgroups: boolean; search?: string | null }, ctx: GqlContext) => {
      const search = optionalText(args.search, 'search');
      const namespaceIds = [g.namespace.id];
      if (args.includeSubgroups) namespaceIds.push(...(await descendantGroupIds(ctx.kiln.db, [g.namespace.id])).keys());
      const query = await findProjects(ctx.kiln.db, ctx.viewer, { namespaceIds, search });
      return connectionFromQuery(query, args, 'desc', 'projects.id');
    },
  },
  Query: {
    project: async (_: unknown, args: { fullPath: string }, ctx: GqlContext) => {
      const fullPath = boundedText(args.fullPath, 'fullPath', MAX_FULL_PATH);
      if (!fullPath.includes('/')) return null;
      const project = await findProjectByIdOrPath(ctx.kiln.db, fullPath);
      if (!project || project.pending_delete) return null;
      ctx.loaders.projects.prime(project.id, project);
      return await canProject(ctx, project, 'read_project') ? project : null;
    },
    projects: async (
      _: unknown,
      args: ConnectionArgs & { membership?: boolean | null; search?: string | null; ids?: string[] | null },
      ctx: GqlContext,
    ) => {
      const search = optionalText(args.search, 'search');
      if (args.ids && args.ids.length > MAX_PAGE_SIZE) throw new GraphQLError(`At most ${MAX_PAGE_SIZE} ids can be given`);
      const ids = args.ids?.map((raw) => {
        const gid = parseGid(raw);
        if (!gid || gid.model !== MODELS.project) {
          throw new GraphQLError(`${JSON.stringify(raw)} does not represent an instance of Project`);
        }
        return gid.id;
      });
      if (args.membership && !ctx.viewer) return connectionFromArray([], args, 'desc');
      const query = restrictProjects(
        await findProjects(ctx.kiln.db, ctx.viewer, { membership: args.membership === true ? true : undefined, search }),
        ids,
      );
      return connectionFromQuery(query, args, 'desc', 'projects.id');
    },
    group: async (_: unknown, args: { fullPath: string }, ctx: GqlContext) => {
      const ns = await findNamespaceByFullPath(ctx.kiln.db, boundedText(args.fullPath, 'fullPath', MAX_FULL_PATH));
      if (!ns || ns.kind !== 'group') return null;
      return readableGroup(ctx, await ctx.loaders.namespaces.load(ns.id));
    },
  },
};
