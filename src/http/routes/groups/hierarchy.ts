/**
 * What a group contains (the Service's GET /groups/:id/subgroups, /descendant_groups and
 * /projects): sub-groups one level down or at every depth, and the group's projects, each
 * filtered by what the viewer may see. The group itself answers 404 to a viewer who may not read
 * it, so a private group's contents are invisible from outside.
 *
 * Which groups a signed-in viewer sees follows GroupsFinder: those they reach by membership
 * (inherited down the tree), plus those visible to them (public; internal unless external)
 * unless `all_available=false` is sent; administrators see every group. `owned` and
 * `min_access_level` narrow to memberships.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { MEMBER_ACCESS_LEVELS, VISIBILITIES, VISIBILITY_LEVELS } from '../../../domain/permissions/access.ts';
import { groupsQuery, orderGroups, PUBLIC_ONLY, type GroupFilters } from '../../../domain/groups/groups.queries.ts';
import { authorizedGroupLevels } from '../../../domain/members/members.queries.ts';
import { descendantGroupIds, namespacePaths, namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { presentStatistics } from '../../../domain/statistics/project-statistics.ts';
import { statisticsOf } from '../../../domain/statistics/project-statistics.queries.ts';
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { GroupSchema, presentGroup } from '../../entities/group.ts';
import { BasicProjectDetailsSchema, ProjectSchema, withStatistics } from '../../entities/project.ts';
import { compileSerializer, exactJson, serializeWith } from '../../entities/serializers.ts';
import { loadGroup } from '../../loaders/containers.ts';
import { rejectNulBytes } from '../../input/string-guards.ts';
import { presentProjectList } from '../../loaders/project-list.ts';
import { route, type InputOf } from '../../route.ts';

const MAX_ID = 2_147_483_647;
const ACCESS_LEVEL_VALUES = MEMBER_ACCESS_LEVELS.map(String) as unknown as readonly ['10'];

const groupListParams = defineParams({
  id: P.string({ description: 'group id or URL-encoded full path' }),
  all_available: P.optional(P.boolean()),
  search: P.optional(P.string()),
  owned: P.optional(P.boolean({ default: false })),
  min_access_level: P.optional(P.oneOf(ACCESS_LEVEL_VALUES)),
  skip_groups: P.optional(P.array(P.integer())),
  order_by: P.optional(P.oneOf(['name', 'path', 'id'] as const, { default: 'name' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc' })),
  ...paginationParams,
});

const PROJECT_ORDERS = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const;
const projectListParams = defineParams({
  id: P.string({ description: 'group id or URL-encoded full path' }),
  archived: P.optional(P.boolean()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
  search: P.optional(P.string()),
  owned: P.optional(P.boolean({ default: false })),
  min_access_level: P.optional(P.oneOf(ACCESS_LEVEL_VALUES)),
  simple: P.optional(P.boolean({ default: false, description: 'the BasicProject entity only' })),
  include_subgroups: P.optional(P.boolean({ default: false, description: 'also the projects of every sub-group' })),
  // kiln shares no project with a group, so shared projects never add to the list.
  with_shared: P.optional(P.boolean({ default: true })),
  order_by: P.optional(P.oneOf(PROJECT_ORDERS, { default: 'created_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  statistics: P.optional(P.boolean({ default: false, description: 'include project statistics (Reporters and above)' })),
  ...paginationParams,
});

/** A search string longer than any name or path can only find nothing; bound it before SQL. */
const MAX_SEARCH = 255;

const serialize = {
  Projects: compileSerializer(exactJson(Type.Array(ProjectSchema))),
  BasicProjects: compileSerializer(exactJson(Type.Array(BasicProjectDetailsSchema))),
};

type GroupListInput = InputOf<typeof groupListParams>;

const groupHierarchy: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  /** The viewer's part of GroupsFinder: membership and visibility filters. */
  async function visibleTo(
    request: FastifyRequest, input: GroupListInput,
  ): Promise<Pick<GroupFilters, 'memberOf' | 'includeVisible' | 'ownedIds'>> {
    const viewer = request.caller?.user ?? null;
    if (!viewer) return { memberOf: [], includeVisible: PUBLIC_ONLY };
    const levels = await authorizedGroupLevels(db, viewer.id);
    const min = input.min_access_level ? Number(input.min_access_level) : null;
    if (input.owned) return { memberOf: null, includeVisible: null, ownedIds: [...levels].filter(([, l]) => l >= 50).map(([id]) => id) };
    if (min !== null) return { memberOf: [...levels].filter(([, l]) => l >= min).map(([id]) => id), includeVisible: null };
    if (viewer.admin && input.all_available !== false) return { memberOf: null, includeVisible: null };
    return {
      memberOf: [...levels.keys()],
      includeVisible: input.all_available === false ? null : {
        minVisibility: viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal,
      },
    };
  }

  async function listGroups(request: FastifyRequest, reply: FastifyReply, input: GroupListInput, descendants: boolean) {
    rejectNulBytes(input, ['search']);
    const ctx = await loadGroup(request, input.id);
    if (input.search && input.search.length > MAX_SEARCH) return [];
    const parentIds = descendants ? [ctx.group.id, ...(await descendantGroupIds(db, [ctx.group.id])).keys()] : [ctx.group.id];
    const qb = groupsQuery(db, {
      ...(await visibleTo(request, input)), parentIds, search: input.search || undefined,
      // Ids beyond the column's range name no group (and PostgreSQL refuses to compare them).
      skipGroups: input.skip_groups?.filter((id) => id > 0 && id <= MAX_ID),
    });
    const rows = await paginate(db, request, reply, orderGroups(qb, input.order_by, input.sort));
    const paths = await namespacePaths(db, rows);
    const admin = request.caller?.user.admin === 1;
    return rows.map((g) => presentGroup(g, paths.get(g.id)!, { externalUrl, admin }));
  }

  route(app, {
    method: 'GET', url: '/groups/:id/subgroups', auth: 'optional', params: groupListParams,
    schema: { summary: "A group's direct sub-groups the caller may see", tags: ['groups'], response: { 200: Type.Array(GroupSchema) } },
  }, async ({ request, reply, input }) => listGroups(request, reply, input, false));

  route(app, {
    method: 'GET', url: '/groups/:id/descendant_groups', auth: 'optional', params: groupListParams,
    schema: { summary: 'Every group below a group that the caller may see', tags: ['groups'], response: { 200: Type.Array(GroupSchema) } },
  }, async ({ request, reply, input }) => listGroups(request, reply, input, true));

  route(app, {
    method: 'GET', url: '/groups/:id/projects', auth: 'optional', params: projectListParams,
    schema: {
      summary: "A group's projects the caller may see", tags: ['groups'],
      response: { 200: Type.Array(Type.Union([ProjectSchema, BasicProjectDetailsSchema])) },
    },
  }, async ({ request, reply, input, caller }) => {
    rejectNulBytes(input, ['search']);
    const ctx = await loadGroup(request, input.id);
    const viewer = caller?.user ?? null;
    // Project, or BasicProjectDetails with `simple` (the Service's groups.rb present_projects).
    const serializer = input.simple ? serialize.BasicProjects : serialize.Projects;
    if (input.search && input.search.length > MAX_SEARCH) {
      serializeWith(reply, serializer);
      return [];
    }
    const namespaceIds = input.include_subgroups ? [
      ctx.group.id, ...(await descendantGroupIds(db, [ctx.group.id])).keys(),
    ] : [ctx.group.id];
    const qb = await findProjects(db, viewer, {
      namespaceIds, archived: input.archived ?? undefined, visibility: input.visibility, search: input.search || undefined,
      owned: input.owned, minAccessLevel: input.min_access_level ? Number(input.min_access_level) : undefined,
    });
    const ordered = input.order_by === 'id'
      ? qb.orderBy('projects.id', input.sort)
      : qb.orderBy(`projects.${input.order_by}`, input.sort).orderBy('projects.id', input.sort);
    const rows = await paginate(db, request, reply, ordered);
    // Chosen once the page is read, so an error on the way keeps the error body's own shape.
    serializeWith(reply, serializer);
    const entity = input.simple ? 'basic' : 'project';
    const body = await presentProjectList(db, rows, { externalUrl, sshPort: config.sshPort, viewer, entity });
    // statistics=true, as on GET /projects: read once for the page, shown on the projects the
    // viewer may read them of (read_statistics: Reporter; administrators).
    if (!input.statistics || input.simple || !viewer) return body;
    const stats = await statisticsOf(db, rows.map((r) => r.id));
    const lineages = await namespacePathsById(db, [...new Set(rows.map((r) => r.namespace_id))]);
    const readable = new Set<number>();
    for (const row of rows) {
      const lineage = lineages.get(row.namespace_id)?.lineage ?? [];
      if (canOnProject(await projectActor(db, viewer, row.id, lineage), 'read_statistics', row)) readable.add(row.id);
    }
    return body.map((p) => (readable.has(p.id) ? withStatistics(p, presentStatistics(stats.get(p.id))) : p));
  });
};

export default groupHierarchy;
