/**
 * The projects resource (CONTRACT §4; issue 3): create, list, show, update, archive, unarchive,
 * delete. `:id` is an integer or the URL-encoded full path. Reading follows the project policy
 * (public projects answer without authentication); administrators also see the storage shard.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { NamespaceRow, UserRow } from '../../../db/types.ts';
import { findUserById, findUserByIdOrUsername } from '../../../domain/users/users.queries.ts';
import {
  findNamespaceById, findNamespaceByIdOrPath, findUserNamespace, namespacePaths,
} from '../../../domain/namespaces/namespaces.queries.ts';
import { groupActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { MEMBER_ACCESS_LEVELS, VISIBILITIES, visibilityLevel, type Visibility } from '../../../domain/permissions/access.ts';
import { pathFromName } from '../../../domain/namespaces/paths.ts';
import { createProject, type FieldErrors } from '../../../domain/projects/create-project.ts';
import { updateProject } from '../../../domain/projects/update-project.ts';
import { deleteProject } from '../../../domain/projects/delete-project.ts';
import { removeProjectUploads } from '../../../domain/uploads/uploads.ts';
import { findProjects, type ProjectFilters } from '../../../domain/projects/project.finder.ts';
import { starProject, starrersQuery, unstarProject } from '../../../domain/stars/stars.queries.ts';
import { projectUsersQuery } from '../../../domain/members/members.queries.ts';
import { presentUserBasic, UserBasicSchema } from '../../entities/user.ts';
import { countProjectsInNamespace, updateProjectRow } from '../../../domain/projects/projects.queries.ts';
import { badRequest, badRequestMessage, conflict, notFound, validationFailed } from '../../errors.ts';
import { transferProject, TRANSFER_ERRORS } from '../../../domain/projects/transfer-project.ts';
import { READ_ONLY_MESSAGE } from '../../../domain/repositories/repositories.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { defineParams, P, type ParamsOf } from '../../input/params.ts';
import { keysetParams, keysetRequested, paginate, paginateKeyset, paginationParams } from '../../lists/pagination.ts';
import { compileSerializer, exactJson, serializeWith } from '../../entities/serializers.ts';
import {
  BasicProjectDetailsSchema, ProjectSchema, ProjectWithAccessSchema, withStatistics, type NamespaceInfo, type ProjectWithAccess,
} from '../../entities/project.ts';
import { presentStatistics } from '../../../domain/statistics/project-statistics.ts';
import { statisticsOf } from '../../../domain/statistics/project-statistics.queries.ts';
import type { ProjectRow } from '../../../db/tables/projects.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { presentOneProject, presentProjectList, type ProjectEntity } from '../../loaders/project-list.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { shownRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';
import { resourceBotIds } from '../../../domain/tokens/tokens.queries.ts';
import { removeResourceBots } from '../../../domain/tokens/resource-access-tokens.ts';
import { route } from '../../route.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defaultVisibilityLevel, restrictedVisibilityError } from '../../../domain/settings/visibility.ts';
import { attributeChanges, newProjectDefaults, type ProjectAttributesInput } from '../../../domain/projects/project-attributes.ts';
import { scheduleMove } from '../../../domain/storage-moves/schedule-move.ts';
import { findContainer } from '../../../domain/storage-moves/storage-moves.queries.ts';
import { ATTRIBUTE_NAMES, projectAttributeParams, projectUpdateOnlyParams, refuseNils, UPDATE_ONLY_NAMES } from './attribute-params.ts';

/**
 * The Service's entity per route (lib/api/projects.rb): signed-in readers get ProjectWithAccess,
 * anonymous ones and `simple=true` BasicProjectDetails, writes Project.
 */
const serialize = {
  one: {
    basic: compileSerializer(exactJson(Type.Object(BasicProjectDetailsSchema.properties))),
    project: compileSerializer(exactJson(Type.Object(ProjectSchema.properties))),
    with_access: compileSerializer(exactJson(Type.Object(ProjectWithAccessSchema.properties))),
  } satisfies Record<ProjectEntity, unknown>,
  // Written by JSON.stringify in the presenters' order, the Service's (entities/serializers.ts exactJson).
  list: {
    basic: compileSerializer(exactJson(Type.Array(BasicProjectDetailsSchema))),
    project: compileSerializer(exactJson(Type.Array(ProjectSchema))),
    with_access: compileSerializer(exactJson(Type.Array(ProjectWithAccessSchema))),
  } satisfies Record<ProjectEntity, unknown>,
};
const OneProject = Type.Union([ProjectWithAccessSchema, ProjectSchema, BasicProjectDetailsSchema]);

/**
 * A new default branch or a deletion while the repository moves to another storage. The
 * Service has no API-level refusal for either (it moves HEAD or removes the repository under
 * the move); kiln refuses them as a conflict with the move under way, in the words the git layer
 * uses for a push, so that the move neither loses the write nor copies a removed repository.
 */
const readOnly = () => conflict(READ_ONLY_MESSAGE);

/** The Service's project offset ceiling (reference §7.4). */
const PROJECT_MAX_OFFSET = { limit: 50_000, typeName: 'Project' };
/** Project's `validates :description, length: { maximum: 2000 }`. */
const PROJECT_DESCRIPTION_MAX = 2000;
const ORDERS = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const;

const createAttributes = {
  // Project's limits (name and path 255, description 2000), checked before any directory is made.
  name: P.optional(P.name({ description: 'project name (path derived from it when absent)' })),
  path: P.optional(P.name({ description: 'repository path (name derived from it when absent)' })),
  description: P.optional(P.string({ maxLength: PROJECT_DESCRIPTION_MAX })),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default: the default_project_visibility setting' })),
  default_branch: P.optional(P.name({ description: 'branch HEAD names (default: the default_branch_name setting, else main)' })),
  initialize_with_readme: P.optional(P.boolean({ default: false })),
  public_builds: P.optional(P.boolean({ description: 'non-members may read jobs, logs and artifacts by visibility (default true)' })),
  ...projectAttributeParams,
};
const createParams = defineParams(
  { ...createAttributes, namespace_id: P.optional(P.integer({ description: 'default: the personal namespace' })) },
  { atLeastOneOf: [['name', 'path']] },
);
const createForUserParams = defineParams(
  { ...createAttributes, user_id: P.integer(), namespace_id: P.optional(P.integer()) },
  { atLeastOneOf: [['name', 'path']] },
);
const idParams = defineParams({ id: P.string({ description: 'project id or URL-encoded full path' }) });
const getParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  statistics: P.optional(P.boolean({ default: false, description: 'include project statistics (Reporters and above)' })),
});
const transferParams = defineParams({ id: P.string(), namespace: P.name({ description: 'the id or full path of the new namespace' }) });
const updateParams = defineParams({
  id: P.string(),
  name: P.optional(P.name()),
  path: P.optional(P.name()),
  description: P.optional(P.string({ maxLength: PROJECT_DESCRIPTION_MAX })),
  default_branch: P.optional(P.name()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
  public_builds: P.optional(P.boolean({ description: 'non-members may read jobs, logs and artifacts by visibility (default true)' })),
  ...projectAttributeParams,
  ...projectUpdateOnlyParams,
}, {
  atLeastOneOf: [[
    'name', 'path', 'description', 'default_branch', 'visibility', 'public_builds', ...ATTRIBUTE_NAMES, ...UPDATE_ONLY_NAMES,
  ]],
});
const listFields = {
  archived: P.optional(P.boolean()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
  search: P.optional(P.string()),
  owned: P.optional(P.boolean({ default: false })),
  membership: P.optional(P.boolean({ default: false })),
  simple: P.optional(P.boolean({ default: false, description: 'BasicProjectDetails only' })),
  min_access_level: P.optional(P.oneOf(MEMBER_ACCESS_LEVELS.map(String) as unknown as readonly ['10'])),
  order_by: P.optional(P.oneOf(ORDERS, { default: 'created_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  repository_storage: P.optional(P.string({ description: 'administrators only' })),
  last_activity_after: P.optional(P.dateTime()),
  last_activity_before: P.optional(P.dateTime()),
  starred: P.optional(P.boolean({ description: "the caller's starred projects only" })),
  topic: P.optional(P.array(P.name(), { commaSeparated: true, maxItems: 20, description: 'projects with every one of these topics' })),
  custom_attributes: P.optional(P.hash({ valueMaxLength: 255, description: 'custom_attributes[key]=value filters (administrators)' })),
  statistics: P.optional(P.boolean({ default: false, description: 'include project statistics (Reporters and above)' })),
  ...keysetParams,
  ...paginationParams,
};
const listParams = defineParams(listFields);
const userListParams = defineParams({ user_id: P.name({ description: 'the user id or username' }), ...listFields });
const forksListParams = defineParams({ id: P.string({ description: 'project id or URL-encoded full path' }), ...listFields });
type ListInput = ParamsOf<typeof listParams>;
const starrersParams = defineParams({ id: P.string(), search: P.optional(P.name()), ...paginationParams });
const projectUsersParams = defineParams({
  id: P.string(), search: P.optional(P.name()),
  skip_users: P.optional(P.array(P.integer(), { commaSeparated: true, description: 'user ids to leave out' })),
  ...paginationParams,
});
/** UserStarsProject: when the user starred the project, and who they are. */
const StarrerSchema = Type.Object({ starred_since: Type.String(), user: UserBasicSchema }, { title: 'UserStarsProject' });

interface CreateInput extends ProjectAttributesInput {
  name?: string; path?: string; description?: string; visibility?: Visibility; default_branch?: string;
  initialize_with_readme: boolean; namespace_id?: number | null; public_builds?: boolean | null; repository_storage?: string;
}

const projects: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  /**
   * `project` as `entity`; `administered` where the route passes the Service's
   * user_can_admin_project (show, create, update): runners_token and the other fields for those
   * who may administer the project (Maintainers, Owners, administrators).
   */
  async function send(
    reply: FastifyReply, viewer: UserRow | null, project: ProjectRow, ns: NamespaceInfo & { lineage: number[] },
    entity: ProjectEntity, administered: boolean,
  ) {
    const mayAdminister = administered && viewer !== null
      && canOnProject(await projectActor(db, viewer, project.id, ns.lineage), 'admin_project', project);
    const runners = mayAdminister
      ? { runnersToken: await shownRegistrationToken(db, await sealerFor(config.dataDir), 'Project', project.id) }
      : undefined;
    const body = await presentOneProject(db, project, ns, { externalUrl, sshPort: config.sshPort, viewer, entity, administered: runners });
    serializeWith(reply, serialize.one[entity]);
    return body;
  }

  /** May `creator` create a project in `namespace`? (Projects::CreateService#allowed_namespace?). */
  async function mayCreateIn(creator: UserRow, namespace: NamespaceRow | undefined): Promise<boolean> {
    if (!namespace) return false;
    if (namespace.kind === 'user') return namespace.owner_id === creator.id || creator.admin === 1;
    const lineage = (await namespacePaths(db, [namespace])).get(namespace.id)!.lineage;
    return canOnGroup(await groupActor(db, creator, lineage), 'create_projects', namespace);
  }

  async function personalLimitError(creator: UserRow, namespace: NamespaceRow): Promise<string | null> {
    if (namespace.kind !== 'user' || namespace.owner_id !== creator.id) return null;
    if (creator.projects_limit === 0) return 'Personal project creation is not allowed. Please contact your administrator with questions';
    const overLimit = await countProjectsInNamespace(db, namespace.id) >= creator.projects_limit;
    return overLimit
      ? `Your project limit is ${creator.projects_limit} projects! Please contact your administrator to increase it`
      : null;
  }

  async function create(reply: FastifyReply, viewer: UserRow, creator: UserRow, input: CreateInput) {
    const namespace = input.namespace_id != null
      ? await findNamespaceById(db, input.namespace_id)
      : await findUserNamespace(db, creator.id);
    if (!(await mayCreateIn(creator, namespace))) throw validationFailed({ namespace: ['is not valid'] });
    const limit = await personalLimitError(creator, namespace!);
    if (limit) throw validationFailed({ limit_reached: [limit] });
    const paths = (await namespacePaths(db, [namespace!])).get(namespace!.id)!;
    const name = input.name ?? input.path!;
    refuseNils(input);
    const settings = await currentSettings(db);
    // Without a visibility, the instance's default, lowered to the group's as the Service's
    // Projects::CreateService lowers it; the administrator's restrictions hold either way.
    let level = input.visibility ? visibilityLevel(input.visibility) : defaultVisibilityLevel(settings, 'project');
    if (!input.visibility && namespace!.kind === 'group') level = Math.min(level, namespace!.visibility_level);
    const restricted = restrictedVisibilityError(settings, viewer, level);
    if (restricted) throw validationFailed({ visibility_level: [restricted] });
    const attributes = attributeChanges(input, null);
    if (!attributes.ok) throw validationFailed(attributes.errors);
    const result = await createProject(db, config.storages, {
      creator, namespace: namespace!, namespaceFullPath: paths.fullPath, name, path: input.path ?? pathFromName(name),
      description: input.description ?? null, visibilityLevel: level,
      defaultBranch: input.default_branch ?? (settings.default_branch_name || null), initializeWithReadme: input.initialize_with_readme,
      attributes: {
        ...newProjectDefaults({
          visibilityLevel: level, sharedRunnersEnabled: settings.shared_runners_enabled, autoDevopsEnabled: settings.auto_devops_enabled,
          buildTimeout: config.ciJobTimeout,
        }),
        ...(typeof input.public_builds === 'boolean' ? { public_builds: input.public_builds ? 1 : 0 } : {}),
        ...attributes.set,
      },
      // Only administrators choose the shard (the Service's "Available only to admins").
      ...(viewer.admin && input.repository_storage ? { storage: input.repository_storage } : {}),
    });
    if (!result.ok) throw validationFailed(result.errors as FieldErrors);
    reply.code(201);
    return send(reply, viewer, result.project, { namespace: namespace!, ...paths }, 'project', true);
  }

  route(app, {
    method: 'POST', url: '/projects', auth: 'required', params: createParams,
    schema: { summary: 'Create a project', tags: ['projects'], response: { 201: OneProject } },
  }, async ({ reply, input, caller }) => {
    const viewer = caller.user;
    return create(reply, viewer, viewer, input);
  });

  route(app, {
    method: 'POST', url: '/projects/user/:user_id', auth: 'required', params: createForUserParams,
    schema: { summary: 'Create a project for a user (administrators)', tags: ['projects'], response: { 201: OneProject } },
  }, async ({ request, reply, input }) => {
    const admin = authenticatedAsAdmin(request);
    const owner = await findUserById(db, input.user_id);
    if (!owner) throw notFound('User');
    return create(reply, admin, owner, input);
  });

  /**
   * A list of projects (ProjectsFinder): what the viewer may see, the request's filters and
   * `scope` (a user's personal projects, or the projects a user starred).
   */
  async function list(request: FastifyRequest, reply: FastifyReply, input: ListInput, viewer: UserRow | null, scope: ProjectFilters) {
    const admin = viewer?.admin === 1;
    const qb = await findProjects(db, viewer, {
      ...scope,
      ...(input.topic && input.topic.length > 0 ? { topics: input.topic } : {}),
      archived: input.archived ?? undefined,
      visibility: input.visibility,
      search: input.search || undefined,
      owned: input.owned === true,
      membership: input.membership === true,
      minAccessLevel: input.min_access_level ? Number(input.min_access_level) : undefined,
      // Only administrators may filter by shard; others' value is ignored as by the Service.
      repositoryStorage: admin ? input.repository_storage : undefined,
      // CustomAttributesFilter: only for those who may read custom attributes (administrators).
      ...(admin && input.custom_attributes ? { customAttributes: input.custom_attributes } : {}),
      lastActivityAfter: input.last_activity_after,
      lastActivityBefore: input.last_activity_before,
      ...(keysetRequested(input) ? {} : { idAfter: input.id_after ?? undefined, idBefore: input.id_before ?? undefined }),
    });
    const rows = keysetRequested(input)
      ? await paginateKeyset(request, reply, qb, { orderBy: input.order_by, supported: ['id'], sort: input.sort })
      : await paginate(db, request, reply, input.order_by === 'id'
        ? qb.orderBy('projects.id', input.sort)
        : qb.orderBy(`projects.${input.order_by as Exclude<(typeof ORDERS)[number], 'id'>}`, input.sort)
          .orderBy('projects.id', input.sort), { maxOffset: PROJECT_MAX_OFFSET });
    const entity: ProjectEntity = viewer && !input.simple ? 'with_access' : 'basic';
    let body = await presentProjectList(db, rows, { externalUrl, sshPort: config.sshPort, viewer, entity });
    // Only with statistics=true does the list read them (one query for the page), and only for
    // the projects the viewer may read them of (read_statistics: Reporter; administrators).
    if (input.statistics && entity === 'with_access' && viewer) {
      const stats = await statisticsOf(db, rows.map((r) => r.id));
      const reporter = (p: ProjectWithAccess) =>
        Math.max(p.permissions.project_access?.access_level ?? 0, p.permissions.group_access?.access_level ?? 0) >= 20;
      body = (body as ProjectWithAccess[])
        .map((p) => (viewer.admin === 1 || reporter(p) ? withStatistics(p, presentStatistics(stats.get(p.id))) : p));
    }
    serializeWith(reply, serialize.list[entity]);
    return body;
  }

  route(app, {
    method: 'GET', url: '/projects', auth: 'optional', params: listParams,
    schema: { summary: 'List projects visible to the caller', tags: ['projects'], response: { 200: Type.Array(OneProject) } },
  }, async ({ request, reply, input, caller }) => {
    const viewer = caller?.user ?? null;
    // `starred` reads the caller's stars; without a caller there are none to read (ProjectsFinder).
    return list(request, reply, input, viewer, input.starred && viewer ? { starredBy: viewer.id } : {});
  });

  route(app, {
    method: 'GET', url: '/users/:user_id/projects', auth: 'optional', params: userListParams,
    schema: { summary: "A user's personal projects the caller may see", tags: ['projects'], response: { 200: Type.Array(OneProject) } },
  }, async ({ request, reply, input, caller }) => {
    const user = await findUserByIdOrUsername(db, input.user_id);
    if (!user) throw notFound('User');
    const viewer = caller?.user ?? null;
    // PersonalProjectsFinder: nothing of a user whose profile the caller may not read.
    const hidden = user.private_profile === 1 && viewer?.id !== user.id && viewer?.admin !== 1;
    const namespace = hidden ? undefined : await findUserNamespace(db, user.id);
    return list(request, reply, input, viewer, {
      namespaceIds: namespace ? [namespace.id] : [], ...(input.starred && viewer ? { starredBy: viewer.id } : {}),
    });
  });

  route(app, {
    method: 'GET', url: '/projects/:id/forks', auth: 'optional', params: forksListParams,
    schema: {
      summary: "A project's direct forks the caller may see (the project list's filters)", tags: ['projects'],
      response: { 200: Type.Array(OneProject) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const viewer = caller?.user ?? null;
    return list(request, reply, input, viewer, { forksOf: ctx.project.id, ...(input.starred && viewer ? { starredBy: viewer.id } : {}) });
  });

  route(app, {
    method: 'GET', url: '/users/:user_id/starred_projects', auth: 'optional', params: userListParams,
    schema: {
      summary: 'The projects a user starred that the caller may see', tags: ['projects'], response: { 200: Type.Array(OneProject) },
    },
  }, async ({ request, reply, input, caller }) => {
    const user = await findUserByIdOrUsername(db, input.user_id);
    if (!user) throw notFound('User');
    return list(request, reply, input, caller?.user ?? null, { starredBy: user.id });
  });

  /** Star or unstar: 201 with the project when it changed, 304 when it already was so (lib/api/projects.rb). */
  for (const action of ['star', 'unstar'] as const) {
    route(app, {
      method: 'POST', url: `/projects/:id/${action}`, auth: 'required', params: idParams,
      schema: {
        summary: action === 'star' ? 'Star a project (304 when starred already)' : 'Unstar a project (304 when not starred)',
        tags: ['projects'], response: { 201: OneProject, 304: Type.Null() },
      },
    }, async ({ request, reply, input, caller }) => {
      const ctx = await loadProject(request, input.id);
      const changed = action === 'star'
        ? await starProject(db, caller.user.id, ctx.project.id)
        : await unstarProject(db, caller.user.id, ctx.project.id);
      if (!changed) return reply.code(304).send();
      reply.code(201);
      return send(reply, caller.user, ctx.project, { ...ctx.namespace, lineage: ctx.lineage }, 'project', false);
    });
  }

  route(app, {
    method: 'GET', url: '/projects/:id/users', auth: 'optional', params: projectUsersParams,
    schema: {
      summary: "The project's users: its members and its groups' (by user id)", tags: ['projects'],
      response: { 200: Type.Array(UserBasicSchema) },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    // ProjectTeam#users: the project's members and those of the groups above it, once each.
    const rows = await paginate(db, request, reply, projectUsersQuery(db, ctx.project.id, ctx.lineage, {
      search: input.search || undefined, skip: input.skip_users ?? [],
    }));
    return rows.map((u) => presentUserBasic(u, {}, { externalUrl, canReadProfile: false }));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/starrers', auth: 'optional', params: starrersParams,
    schema: { summary: 'The users who starred a project', tags: ['projects'], response: { 200: Type.Array(StarrerSchema) } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const rows = await paginate(db, request, reply, starrersQuery(db, ctx.project.id, caller?.user ?? null, input.search || undefined));
    return rows.map(({ starred_since, ...user }) => ({
      starred_since, user: presentUserBasic(user, {}, { externalUrl, canReadProfile: false }),
    }));
  });

  route(app, {
    method: 'GET', url: '/projects/:id', auth: 'optional', params: getParams,
    schema: { summary: 'A single project (public projects without authentication)', tags: ['projects'], response: { 200: OneProject } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const viewer = caller?.user ?? null;
    const body = await send(reply, viewer, ctx.project, { ...ctx.namespace, lineage: ctx.lineage }, viewer ? 'with_access' : 'basic', true);
    if (!input.statistics || !viewer || !canOnProject(ctx.actor, 'read_statistics', ctx.project)) return body;
    return withStatistics(body, presentStatistics((await statisticsOf(db, [ctx.project.id])).get(ctx.project.id)));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Update a project', tags: ['projects'], response: { 200: OneProject } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'update_project');
    refuseNils(input);
    const level = input.visibility ? visibilityLevel(input.visibility) : undefined;
    if (level !== undefined && level !== ctx.project.visibility_level) {
      const restricted = restrictedVisibilityError(await currentSettings(db), caller.user, level);
      if (restricted) throw validationFailed({ visibility_level: [restricted] });
    }
    const attributes = attributeChanges(input, ctx.project);
    if (!attributes.ok) throw validationFailed(attributes.errors);
    // An administrator's new shard moves the repository there (Projects::UpdateService schedules a
    // storage move); the Service ignores the attribute from anyone else.
    if (caller.user.admin && input.repository_storage && input.repository_storage !== ctx.project.repository_storage) {
      const container = await findContainer(db, 'project', ctx.project.id);
      if (!container) throw notFound('Project');
      const moved = await scheduleMove({ db, jobs: app.jobs, shards: config.storages }, 'project', container, input.repository_storage);
      if (!moved.ok) throw validationFailed(moved.errors);
    }
    const result = await updateProject(db, config.storages, ctx.project, ctx.namespace.namespace, {
      name: input.name, path: input.path, description: input.description, defaultBranch: input.default_branch,
      visibilityLevel: level, namespaceFullPath: ctx.namespace.fullPath,
      attributes: {
        ...attributes.set,
        ...(typeof input.public_builds === 'boolean' ? { public_builds: input.public_builds ? 1 : 0 } : {}),
      },
    });
    if (!result.ok) {
      if (result.reason === 'default_branch') throw badRequest('Could not set the default branch');
      if (result.reason === 'not_found') throw notFound('Project');
      if (result.reason === 'read_only') throw readOnly();
      throw validationFailed(result.errors);
    }
    return send(reply, caller.user, result.project, { ...ctx.namespace, lineage: ctx.lineage }, 'project', true);
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/transfer', auth: 'required', params: transferParams,
    schema: { summary: 'Move a project to another namespace (its old path redirects)', tags: ['projects'], response: { 200: OneProject } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    // change_namespace is the Owner's (ProjectPolicy).
    authorizeProject(ctx, 'delete_project');
    const namespace = await findNamespaceByIdOrPath(db, input.namespace);
    if (!namespace || !(await mayRead(caller.user, namespace))) throw notFound('Namespace');
    const failed = (error: string) => badRequestMessage(`Failed to transfer project {:new_namespace=>[${JSON.stringify(error)}]}`);
    // allowed_transfer?: the caller may move projects into the target (transfer_projects: Maintainer of a group).
    if (!(await mayCreateIn(caller.user, namespace))) throw failed(TRANSFER_ERRORS.notAllowed);
    const paths = (await namespacePaths(db, [namespace])).get(namespace.id)!;
    const result = await transferProject(db, ctx.project, {
      namespace, namespaceFullPath: paths.fullPath, oldFullPath: `${ctx.namespace.fullPath}/${ctx.project.path}`, userId: caller.user.id,
    });
    if (!result.ok) throw failed(result.error);
    return send(reply, caller.user, result.project, { namespace, ...paths }, 'project', false);
  });

  /** find_namespace!: a namespace the caller may see (read_namespace: its owner, or a group they may read). */
  async function mayRead(user: UserRow, namespace: NamespaceRow): Promise<boolean> {
    if (user.admin) return true;
    if (namespace.kind === 'user') return namespace.owner_id === user.id;
    const lineage = (await namespacePaths(db, [namespace])).get(namespace.id)!.lineage;
    return canOnGroup(await groupActor(db, user, lineage), 'read_group', namespace);
  }

  for (const [action, archived] of [['archive', 1], ['unarchive', 0]] as const) {
    route(app, {
      method: 'POST', url: `/projects/:id/${action}`, auth: 'required', params: idParams,
      schema: { summary: `${action[0].toUpperCase()}${action.slice(1)} a project`, tags: ['projects'], response: { 201: OneProject } },
    }, async ({ request, reply, input, caller }) => {
      const ctx = await loadProject(request, input.id);
      authorizeProject(ctx, 'archive_project');
      const project = await updateProjectRow(db, ctx.project.id, { archived });
      reply.code(201);
      return send(reply, caller.user, project, { ...ctx.namespace, lineage: ctx.lineage }, 'project', false);
    });
  }

  route(app, {
    method: 'DELETE', url: '/projects/:id', auth: 'required', params: idParams,
    schema: {
      summary: 'Delete a project and its repository',
      tags: ['projects'],
      response: { 202: Type.Object({ message: Type.String() }) },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'delete_project');
    const bots = await resourceBotIds(db, 'Project', ctx.project.id);
    const result = await deleteProject(db, app.jobs, config.storages, ctx.project.id, caller.user.id);
    if (!result.ok) throw result.reason === 'not_found' ? notFound('Project') : readOnly();
    // Its Markdown attachments (their rows went with the project; the wiki went with its repository).
    await removeProjectUploads(config.dataDir, ctx.project.id);
    // The project's access tokens go with it: their bots are deleted (domain/tokens/resource-access-tokens.ts).
    const host = new URL(config.externalUrl).hostname;
    await removeResourceBots(db, bots, { hardDelete: false, host, dataDir: config.dataDir, shards: config.storages });
    // The Service's `accepted!`: 202 {"message":"202 Accepted"} (reference §6.1).
    reply.code(202);
    return { message: '202 Accepted' };
  });
};

export default projects;
