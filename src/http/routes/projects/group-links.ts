/**
 * Sharing a project with groups (lib/api/projects.rb 15.2, Projects::GroupLinks::CreateService):
 * `POST /projects/:id/share` (Maintainers; the group must be one the caller may read; not the
 * project's own group or one above it; once per group) answers the ProjectGroupLink, `DELETE
 * /projects/:id/share/:group_id` 204. Members of the shared-with group then hold the lower of
 * their level and `group_access` on the project (domain/members/members.queries.ts). Also `GET
 * /projects/:id/groups` (Projects::GroupsFinder): the project's ancestor groups and, with
 * `with_shared`, the groups it is shared with.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { findNamespaceById, namespacePaths } from '../../../domain/namespaces/namespaces.queries.ts';
import { groupActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { MEMBER_ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import { deleteProjectLink, insertProjectLink, projectLinksOf } from '../../../domain/group-links/group-links.queries.ts';
import { groupsQuery } from '../../../domain/groups/groups.queries.ts';
import { authorizedGroupLevels } from '../../../domain/members/members.queries.ts';
import { isUniqueViolation } from '../../../db/constraints.ts';
import { apiError, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

/** ProjectGroupLink validates group_access within Gitlab::Access.values (Guest … Maintainer). */
const LINK_LEVELS = MEMBER_ACCESS_LEVELS.filter((l) => l < 50);

const ProjectGroupLinkSchema = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  group_id: Type.Integer(),
  group_access: Type.Integer(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
}, { title: 'ProjectGroupLink' });

/** GET /projects/:id/groups answers the Service's PublicGroupDetails. */
const PublicGroupDetailsSchema = Type.Object({
  id: Type.Integer(),
  web_url: Type.String(),
  name: Type.String(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  full_name: Type.String(),
  full_path: Type.String(),
}, { title: 'PublicGroupDetails' });

const shareParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  group_id: P.integer({ description: 'the group to share with' }),
  group_access: P.integer({ description: '10 guest, 20 reporter, 30 developer, 40 maintainer' }),
  expires_at: P.optional(P.date({ description: 'the link gives nothing from this day on' })),
});
const unshareParams = defineParams({ id: P.string(), group_id: P.integer() });
const groupsParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  search: P.optional(P.name()),
  skip_groups: P.optional(P.array(P.integer(), { commaSeparated: true })),
  with_shared: P.optional(P.boolean({ default: false, description: 'also the groups the project is shared with' })),
  shared_visible_only: P.optional(P.boolean({ default: false })),
  shared_min_access_level: P.optional(P.integer({ minimum: 0, maximum: 50 })),
  ...paginationParams,
});

const groupLinks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/projects/:id/share', auth: 'required', params: shareParams,
    schema: { summary: 'Share a project with a group', tags: ['projects'], response: { 201: ProjectGroupLinkSchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    if (!(LINK_LEVELS as readonly number[]).includes(input.group_access)) throw invalidParams(['group_access does not have a valid value']);
    // Projects::GroupLinks::CreateService#valid_to_create?: a group the caller may read, or 404.
    const group = await findNamespaceById(db, input.group_id);
    if (!group || group.kind !== 'group') throw apiError(404, 'Not Found');
    const lineage = (await namespacePaths(db, [group])).get(group.id)!.lineage;
    if (!canOnGroup(await groupActor(db, caller.user, lineage), 'read_group', group)) throw apiError(404, 'Not Found');
    // ProjectGroupLink#different_group: not the project's own group or one above it.
    if (ctx.lineage.includes(group.id)) {
      throw apiError(409, 'Project cannot be shared with the group it is in or one of its ancestors.');
    }
    try {
      const link = await insertProjectLink(db, {
        projectId: ctx.project.id, groupId: group.id, access: input.group_access, expiresAt: input.expires_at ?? null,
      });
      reply.code(201);
      return {
        id: link.id, project_id: link.project_id, group_id: link.group_id, group_access: link.group_access, expires_at: link.expires_at,
      };
    } catch (err) {
      if (isUniqueViolation(err)) throw apiError(409, 'Group already shared with this group');
      throw err;
    }
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/share/:group_id', auth: 'required', params: unshareParams,
    schema: { summary: 'Stop sharing a project with a group', tags: ['projects'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    if (!(await deleteProjectLink(db, ctx.project.id, input.group_id))) throw notFound('Group Link');
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/projects/:id/groups', auth: 'optional', params: groupsParams,
    schema: {
      summary: "The project's ancestor groups (and, with_shared, the groups it is shared with)", tags: ['projects'],
      response: { 200: Type.Array(PublicGroupDetailsSchema) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const viewer = caller?.user ?? null;
    let ids = ctx.namespace.namespace.kind === 'group' ? [...ctx.lineage] : [];
    if (input.with_shared) {
      const links = await projectLinksOf(db, [ctx.project.id]);
      ids.push(...links.filter((l) => l.group_access >= (input.shared_min_access_level ?? 0)).map((l) => l.group_id));
      if (input.shared_visible_only) {
        const levels = viewer && !viewer.admin ? await authorizedGroupLevels(db, viewer.id) : null;
        const own = new Set(ctx.lineage);
        const visible = await Promise.all(ids.map(async (id) => {
          if (own.has(id) || viewer?.admin) return true;
          const g = await findNamespaceById(db, id);
          return g !== undefined && (g.visibility_level >= (viewer ? 10 : 20) || (levels?.has(id) ?? false));
        }));
        ids = ids.filter((_, i) => visible[i]);
      }
    }
    const skip = new Set(input.skip_groups ?? []);
    ids = [...new Set(ids)].filter((id) => !skip.has(id));
    const qb = groupsQuery(db, { memberOf: null, includeVisible: null, ...(input.search ? { search: input.search } : {}) })
      .where('id', 'in', ids.length > 0 ? ids : [0]);
    const rows = await paginate(db, request, reply, qb.orderBy('name').orderBy('id'));
    const paths = await namespacePaths(db, rows);
    return rows.map((g) => {
      const p = paths.get(g.id)!;
      return {
        id: g.id, web_url: `${config.externalUrl}/groups/${p.fullPath}`, name: g.name, avatar_url: null,
        full_name: p.fullName, full_path: p.fullPath,
      };
    });
  });
};

export default groupLinks;
