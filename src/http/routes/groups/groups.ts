/**
 * The groups resource (CONTRACT §4): create (the creator becomes Owner; a wiki repository is
 * created), list (GroupsFinder visibility: anonymous readers see public groups, users their
 * groups or with all_available=true every group they may see, administrators all), and show
 * (GroupDetail with the group's projects the caller may see).
 *
 * Names order case-insensitively (lower(name), then id: the namespaces_kind_name index), so
 * both engines agree. Anonymous readers may page by keyset with an opaque cursor, in name order
 * ascending only (spec, Limits; reference §7.5); signed-in callers always get offset pages, as
 * the Service presents their groups without pagination strategies.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { NamespaceRow } from '../../../db/types.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defaultVisibilityLevel, restrictedVisibilityError } from '../../../domain/settings/visibility.ts';
import { MEMBER_ACCESS_LEVELS, VISIBILITIES, VISIBILITY_LEVELS, visibilityLevel } from '../../../domain/permissions/access.ts';
import { createGroup } from '../../../domain/groups/create-group.ts';
import { canCreateTopLevelGroup, groupsQuery, orderGroups, PUBLIC_ONLY } from '../../../domain/groups/groups.queries.ts';
import { authorizedGroupLevels } from '../../../domain/members/members.queries.ts';
import { namespacePaths, namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { findProjects } from '../../../domain/projects/project.finder.ts';
import { apiError, badRequestMessage, conflict, forbidden, invalidParams, notFound, validationFailed } from '../../errors.ts';
import {
  deleteGroupLink, groupLinksOf, insertGroupLink, projectIdsSharedWith,
} from '../../../domain/group-links/group-links.queries.ts';
import { isUniqueViolation } from '../../../db/constraints.ts';
import { transferGroup } from '../../../domain/groups/transfer-group.ts';
import { updateGroup } from '../../../domain/groups/update-group.ts';
import { deleteGroup } from '../../../domain/groups/delete-group.ts';
import { removeResourceBots } from '../../../domain/tokens/resource-access-tokens.ts';
import { audit } from '../../audit.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import type { GroupContext } from '../../loaders/containers.ts';
import type { FastifyRequest } from 'fastify';
import { defineParams, P } from '../../input/params.ts';
import {
  cursorKeysetParams, keysetRequested, keysetUnavailable, paginate, paginateCursor, paginationParams, type CursorKey,
} from '../../lists/pagination.ts';
import { GroupDetailSchema, GroupSchema, presentGroup } from '../../entities/group.ts';
import { authorizeGroup, loadGroup } from '../../loaders/containers.ts';
import { presentProjectList } from '../../loaders/project-list.ts';
import type { Project } from '../../entities/project.ts';
import { route } from '../../route.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { shownRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';

const createParams = defineParams({
  // Namespace's limits (255 each), checked before the group's directory is made (issue 13).
  name: P.name(),
  path: P.name(),
  description: P.optional(P.name()),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default private' })),
  parent_id: P.optional(P.integer({ description: 'create a sub-group of this group' })),
});
const listParams = defineParams({
  all_available: P.optional(P.boolean()),
  search: P.optional(P.string()),
  owned: P.optional(P.boolean({ default: false })),
  min_access_level: P.optional(P.oneOf(['10', '20', '30', '40', '50'] as const)),
  top_level_only: P.optional(P.boolean({ default: false })),
  skip_groups: P.optional(P.array(P.integer())),
  custom_attributes: P.optional(P.hash({ valueMaxLength: 255, description: 'custom_attributes[key]=value filters (administrators)' })),
  order_by: P.optional(P.oneOf(['name', 'path', 'id'] as const, { default: 'name' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'asc' })),
  ...paginationParams,
  ...cursorKeysetParams,
});
/** The keyset order of groups: name (case-insensitively), then id. */
const NAME_KEYS: CursorKey<NamespaceRow>[] = [
  { name: 'name', column: 'name', lower: true, value: (g) => g.name, type: 'string' },
  { name: 'id', column: 'id', value: (g) => g.id, type: 'number' },
];

const showParams = defineParams({ id: P.string({ description: 'group id or URL-encoded full path' }) });

const updateParams = defineParams({
  id: P.string({ description: 'group id or URL-encoded full path' }),
  name: P.optional(P.string()),
  path: P.optional(P.string()),
  description: P.optional(P.string({ ownErrors: true })),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
});

const transferParams = defineParams({
  id: P.string({ description: 'group id or URL-encoded full path' }),
  group_id: P.optional(P.integer({ description: 'the new parent group (none: the top level)' })),
});

const shareParams = defineParams({
  id: P.string({ description: 'group id or URL-encoded full path' }),
  group_id: P.integer({ description: 'the group to share with' }),
  group_access: P.integer({ description: '10 guest … 50 owner' }),
  expires_at: P.optional(P.date({ description: 'the link gives nothing from this day on' })),
});
const unshareParams = defineParams({ id: P.string(), group_id: P.integer() });

/** GroupDetail lists at most this many projects (the Service's projects limit on the entity). */
const DETAIL_PROJECTS_LIMIT = 100;

const groups: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  route(app, {
    method: 'POST', url: '/groups', auth: 'required', params: createParams,
    schema: { summary: 'Create a group or sub-group', tags: ['groups'], response: { 201: GroupSchema } },
  }, async ({ request, reply, input, caller }) => {
    const user = caller.user;
    let parent = null;
    if (input.parent_id != null) {
      const ctx = await loadGroup(request, String(input.parent_id));
      authorizeGroup(ctx, 'create_subgroup');
      parent = { row: ctx.group, fullPath: ctx.fullPath, fullName: ctx.fullName };
    } else if (!canCreateTopLevelGroup(user)) {
      throw forbidden();
    }
    // The instance's default_group_visibility and restricted_visibility_levels (domain/settings/visibility.ts).
    const settings = await currentSettings(db);
    const level = input.visibility ? visibilityLevel(input.visibility) : defaultVisibilityLevel(settings, 'group');
    const restricted = restrictedVisibilityError(settings, user, level);
    if (restricted) throw validationFailed({ visibility_level: [restricted] });
    const result = await createGroup(db, config.storages, {
      creator: user, name: input.name, path: input.path, description: input.description ?? '',
      visibilityLevel: level, parent: parent ? { row: parent.row, fullPath: parent.fullPath } : null,
    });
    if (!result.ok) throw validationFailed(result.errors);
    const paths = parent
      ? { fullPath: `${parent.fullPath}/${result.group.path}`, fullName: `${parent.fullName} / ${result.group.name}` }
      : { fullPath: result.group.path, fullName: result.group.name };
    reply.code(201);
    return presentGroup(result.group, paths, { externalUrl, admin: user.admin === 1 });
  });

  route(app, {
    method: 'GET', url: '/groups', auth: 'optional', params: listParams,
    schema: { summary: 'List groups', tags: ['groups'], response: { 200: Type.Array(GroupSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const viewer = caller?.user ?? null;
    const levels = viewer ? await authorizedGroupLevels(db, viewer.id) : new Map<number, number>();
    const min = input.min_access_level ? Number(input.min_access_level) : null;
    const memberIds = [...levels].filter(([, l]) => min === null || l >= min).map(([id]) => id);
    // all_available defaults to true for anonymous readers and administrators, false for users.
    const allAvailable = input.all_available ?? (!viewer || viewer.admin === 1);
    let memberOf: number[] | null = memberIds;
    let includeVisible: { minVisibility: number } | null = null;
    if (!viewer) {
      memberOf = [];
      includeVisible = PUBLIC_ONLY;
    } else if (min === null && !input.owned && allAvailable) {
      if (viewer.admin) memberOf = null;
      else includeVisible = { minVisibility: viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal };
    }
    const qb = groupsQuery(db, {
      memberOf, includeVisible, search: input.search || undefined, topLevelOnly: input.top_level_only,
      skipGroups: input.skip_groups ?? undefined,
      // CustomAttributesFilter: only for those who may read custom attributes (administrators).
      ...(viewer?.admin === 1 && input.custom_attributes ? { customAttributes: input.custom_attributes } : {}),
      ownedIds: input.owned ? [...levels].filter(([, l]) => l >= 50).map(([id]) => id) : undefined,
    });
    let rows: NamespaceRow[];
    if (!viewer && keysetRequested(input)) {
      if (input.order_by !== 'name' || input.sort !== 'asc') throw keysetUnavailable();
      rows = await paginateCursor(request, reply, qb, { keys: NAME_KEYS, sort: 'asc' });
    } else {
      rows = await paginate(db, request, reply, orderGroups(qb, input.order_by, input.sort));
    }
    const paths = await namespacePaths(db, rows);
    return rows.map((g) => presentGroup(g, paths.get(g.id)!, { externalUrl, admin: viewer?.admin === 1 }));
  });

  /**
   * GroupDetail: the group with the projects the viewer may see (GET and PUT answer it), and
   * runners_token for those who may administer the group (the Service's user_can_admin_group).
   */
  async function presentDetail(request: FastifyRequest, ctx: Pick<GroupContext, 'group' | 'fullPath' | 'fullName' | 'actor'>) {
    const viewer = request.caller?.user ?? null;
    const qb = await findProjects(db, viewer, { namespaceIds: [ctx.group.id] });
    const rows = await qb.orderBy('projects.id', 'asc').limit(DETAIL_PROJECTS_LIMIT).execute();
    const projects = await presentProjectList(db, rows, { externalUrl, sshPort: config.sshPort, viewer, entity: 'project' }) as Project[];
    const runnersToken = canOnGroup(ctx.actor, 'admin_group', ctx.group)
      ? { runners_token: await shownRegistrationToken(db, await sealerFor(config.dataDir), 'Namespace', ctx.group.id) }
      : {};
    const links = await groupLinksOf(db, ctx.group.id);
    const linkPaths = links.length > 0 ? await namespacePathsById(db, links.map((l) => l.shared_with_group_id)) : new Map();
    // The projects shared with the group that the viewer may see (GroupDetail's shared_projects).
    const sharedQb = await findProjects(db, viewer, {});
    const sharedRows = await sharedQb.where('projects.id', 'in', projectIdsSharedWith(db, ctx.group.id))
      .orderBy('projects.id', 'asc').limit(DETAIL_PROJECTS_LIMIT).execute();
    const sharedProjects = sharedRows.length > 0
      ? await presentProjectList(db, sharedRows, { externalUrl, sshPort: config.sshPort, viewer, entity: 'project' }) as Project[]
      : [];
    return {
      ...presentGroup(ctx.group, ctx, { externalUrl, admin: viewer?.admin === 1 }),
      // SharedGroupWithGroup for each link of the group (Group#shared_with_group_links).
      shared_with_groups: links.map((l) => ({
        group_id: l.shared_with_group_id, group_name: l.group_name,
        group_full_path: (linkPaths.get(l.shared_with_group_id)?.fullPath ?? '') as string,
        group_access_level: l.group_access, expires_at: l.expires_at,
      })),
      ...runnersToken,
      ...(ctx.group.parent_id === null ? { prevent_sharing_groups_outside_hierarchy: false } : {}),
      projects,
      shared_projects: sharedProjects,
    };
  }

  route(app, {
    method: 'GET', url: '/groups/:id', auth: 'optional', params: showParams,
    schema: { summary: 'A group with its projects', tags: ['groups'], response: { 200: GroupDetailSchema } },
  }, async ({ request, input }) => presentDetail(request, await loadGroup(request, input.id)));

  route(app, {
    method: 'PUT', url: '/groups/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a group (Owner)', tags: ['groups'], response: { 200: GroupDetailSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    const level = input.visibility ? visibilityLevel(input.visibility) : undefined;
    const restricted = level !== undefined && level !== ctx.group.visibility_level
      ? restrictedVisibilityError(await currentSettings(db), caller.user, level) : null;
    if (restricted) throw validationFailed({ visibility_level: [restricted] });
    const result = await updateGroup(db, ctx.group, {
      name: input.name, path: input.path, description: input.description,
      visibilityLevel: input.visibility ? visibilityLevel(input.visibility) : undefined,
    });
    if (!result.ok) {
      if ('notFound' in result) throw notFound('Group');
      throw validationFailed(result.errors);
    }
    const paths = (await namespacePaths(db, [result.group])).get(result.group.id)!;
    return presentDetail(request, { group: result.group, fullPath: paths.fullPath, fullName: paths.fullName, actor: ctx.actor });
  });

  route(app, {
    method: 'POST', url: '/groups/:id/transfer', auth: 'required', params: transferParams,
    schema: {
      summary: 'Move a group below another group, or to the top level without group_id (Owner)', tags: ['groups'],
      response: { 201: GroupDetailSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    const parent = input.group_id != null ? await loadGroup(request, String(input.group_id)) : null;
    const allowed = parent ? canOnGroup(parent.actor, 'create_subgroup', parent.group) : canCreateTopLevelGroup(caller.user);
    const result = await transferGroup(db, ctx.group, { newParent: parent?.group ?? null, user: caller.user, allowed });
    if (!result.ok) throw badRequestMessage(result.error);
    const paths = (await namespacePaths(db, [result.group])).get(result.group.id)!;
    reply.code(201);
    return presentDetail(request, { group: result.group, fullPath: paths.fullPath, fullName: paths.fullName, actor: ctx.actor });
  });

  route(app, {
    method: 'POST', url: '/groups/:id/share', auth: 'required', params: shareParams,
    schema: { summary: 'Share a group with another group (Owner)', tags: ['groups'], response: { 201: GroupDetailSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    if (!(MEMBER_ACCESS_LEVELS as readonly number[]).includes(input.group_access)) {
      throw invalidParams(['group_access does not have a valid value']);
    }
    // find_group!, then Groups::GroupLinks::CreateService: 404 unless the caller may manage the
    // group's members and read the other group.
    const other = await loadGroup(request, String(input.group_id));
    if (!canOnGroup(ctx.actor, 'admin_group_member', ctx.group)) throw apiError(404, 'Not Found');
    try {
      await insertGroupLink(db, {
        sharedGroupId: ctx.group.id, sharedWithGroupId: other.group.id, access: input.group_access, expiresAt: input.expires_at ?? null,
      });
    } catch (err) {
      // GroupGroupLink's uniqueness of shared_group_id scoped to shared_with_group_id.
      if (isUniqueViolation(err)) throw apiError(409, 'Shared group The group has already been shared with this group');
      throw err;
    }
    reply.code(201);
    return presentDetail(request, ctx);
  });

  route(app, {
    method: 'DELETE', url: '/groups/:id/share/:group_id', auth: 'required', params: unshareParams,
    schema: { summary: 'Stop sharing a group with another group (Owner)', tags: ['groups'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group_member');
    if (!(await deleteGroupLink(db, ctx.group.id, input.group_id))) throw notFound('Group Link');
    return reply.code(204).send();
  });

  route(app, {
    method: 'DELETE', url: '/groups/:id', auth: 'required', params: showParams,
    schema: { summary: 'Delete a group, its sub-groups and projects (repositories removed in the background)', tags: ['groups'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    checkUnmodifiedSince(request, ctx.group.updated_at);
    // The Service (EE Groups::DestroyService) records the deletion as AuditEventService's
    // :destroy for the group: `remove: group`, the group as entity and target.
    const result = await deleteGroup(db, app.jobs, ctx.group.id, (trx) => audit(request, {
      entityType: 'Group', entityId: ctx.group.id, entityPath: ctx.fullPath,
      target: { id: ctx.group.id, type: 'Group', details: ctx.fullPath }, change: { kind: 'remove', what: 'group' },
    }, trx), caller.user.id);
    if (!result.ok) {
      // A repository of the group is moving to another storage: removing it now would lose
      // the move's copy or pull the source from under it (see delete-group.ts).
      if (result.reason === 'read_only') throw conflict(READ_ONLY_MESSAGE);
      throw notFound('Group');
    }
    // The access tokens of the group, its sub-groups and projects go with them: their bots are
    // deleted, as DELETE /projects/:id does (domain/tokens/resource-access-tokens.ts).
    const host = new URL(externalUrl).hostname;
    await removeResourceBots(db, result.botIds, { hardDelete: false, host, dataDir: config.dataDir, shards: config.storages });
    // destroy_conditionally! with an asynchronous service: `202 Accepted`.
    reply.code(202);
    return { message: '202 Accepted' };
  });
};

export default groups;
