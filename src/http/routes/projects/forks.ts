/**
 * Forks (lib/api/projects.rb 15.2): `POST /projects/:id/fork` makes a fork in a namespace the
 * caller may create projects in (the row now, the repository by a job: domain/forks/), and the
 * relationship alone between existing projects: `POST /projects/:id/fork/:forked_from_id`
 * (Maintainers of the fork who may fork the source; 409 when it is a fork already) and
 * `DELETE /projects/:id/fork` (Owners; 304 when it is not a fork; closes the requests across it:
 * domain/forks/fork-links.ts). The list of forks is
 * GET /projects/:id/forks (projects.ts, with the project list's filters).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { NamespaceRow, UserRow } from '../../../db/types.ts';
import type { ProjectRow } from '../../../db/tables/projects.ts';
import {
  findNamespaceById, findNamespaceByFullPath, findNamespaceByIdOrPath, findUserNamespace, namespacePaths,
} from '../../../domain/namespaces/namespaces.queries.ts';
import { groupActor, projectActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { ACCESS_LEVELS, VISIBILITIES, visibilityLevel } from '../../../domain/permissions/access.ts';
import { forkProject } from '../../../domain/forks/fork-project.ts';
import { linkFork, unlinkFork } from '../../../domain/forks/fork-links.ts';
import { countProjectsInNamespace, findProjectById } from '../../../domain/projects/projects.queries.ts';
import { apiError, conflictFields, forbidden, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { presentOneProject } from '../../loaders/project-list.ts';
import { compileSerializer, exactJson, serializeWith } from '../../entities/serializers.ts';
import { ProjectSchema } from '../../entities/project.ts';
import { route } from '../../route.ts';
import { shownRegistrationToken } from '../../../domain/runners/registration-token.ts';
import { sealerFor } from '../../../domain/ci-variables/encryption.ts';

const serializeProject = compileSerializer(exactJson(Type.Object(ProjectSchema.properties)));

const forkParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  namespace: P.optional(P.name({ description: '(deprecated) the id or path of the namespace to fork into' })),
  namespace_id: P.optional(P.integer({ description: 'the id of the namespace to fork into' })),
  namespace_path: P.optional(P.name({ description: 'the full path of the namespace to fork into' })),
  path: P.optional(P.name({ description: "the fork's path (default: the source's)" })),
  name: P.optional(P.name({ description: "the fork's name (default: the source's)" })),
  // Project's `validates :description, length: { maximum: 2000 }`.
  description: P.optional(P.string({ maxLength: 2000, description: "the fork's description (default: the source's)" })),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: "at most the source's and the target group's" })),
  mr_default_target_self: P.optional(P.boolean({ description: "merge requests of the fork target the fork itself by default" })),
});
const linkParams = defineParams({ id: P.string(), forked_from_id: P.string({ description: 'the source project id or full path' }) });
const idParams = defineParams({ id: P.string({ description: 'project id or URL-encoded full path' }) });

const forks: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function send(reply: FastifyReply, viewer: UserRow, project: ProjectRow) {
    const ns = (await findNamespaceById(db, project.namespace_id))!;
    const paths = (await namespacePaths(db, [ns])).get(ns.id)!;
    const administered = canOnProject(await projectActor(db, viewer, project.id, paths.lineage), 'admin_project', project);
    const body = await presentOneProject(db, project, { namespace: ns, ...paths }, {
      externalUrl: config.externalUrl, sshPort: config.sshPort, viewer, entity: 'project',
      administered: administered
        ? { runnersToken: await shownRegistrationToken(db, await sealerFor(config.dataDir), 'Project', project.id) }
        : undefined,
    });
    serializeWith(reply, serializeProject);
    return body;
  }

  /** ForkService#valid_fork_target?: administrators anywhere; others their own namespace or a group they may create projects in. */
  async function validTarget(user: UserRow, namespace: NamespaceRow): Promise<boolean> {
    if (user.admin) return true;
    if (namespace.kind === 'user') return namespace.owner_id === user.id;
    const lineage = (await namespacePaths(db, [namespace])).get(namespace.id)!.lineage;
    return canOnGroup(await groupActor(db, user, lineage), 'create_projects', namespace);
  }

  route(app, {
    method: 'POST', url: '/projects/:id/fork', auth: 'required', params: forkParams,
    schema: {
      summary: 'Fork a project (the repository is made in the background: import_status)', tags: ['projects'],
      response: { 201: ProjectSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    const user = caller.user;
    const mayFork = canOnProject(ctx.actor, 'download_code', ctx.project) && canOnProject(ctx.actor, 'fork_project', ctx.project);
    if (!mayFork) throw notFound();
    let namespace: NamespaceRow | undefined;
    if (input.namespace_id != null) namespace = await findNamespaceById(db, input.namespace_id);
    else if (input.namespace_path) namespace = await findNamespaceByFullPath(db, input.namespace_path);
    else if (input.namespace) namespace = await findNamespaceByIdOrPath(db, input.namespace);
    else namespace = await findUserNamespace(db, user.id);
    const named = input.namespace_id != null || Boolean(input.namespace_path) || Boolean(input.namespace);
    if (!namespace) throw notFound(named ? 'Namespace' : 'Target Namespace');
    if (!(await validTarget(user, namespace))) throw notFound('Target Namespace');
    // Projects::CreateService's project limit holds for a fork into the caller's own namespace.
    if (namespace.kind === 'user' && namespace.owner_id === user.id && !user.admin) {
      if (user.projects_limit === 0 || await countProjectsInNamespace(db, namespace.id) >= user.projects_limit) {
        throw conflictFields({
          limit_reached: [user.projects_limit === 0
            ? 'Personal project creation is not allowed. Please contact your administrator with questions'
            : `Your project limit is ${user.projects_limit} projects! Please contact your administrator to increase it`],
        });
      }
    }
    const paths = (await namespacePaths(db, [namespace])).get(namespace.id)!;
    const result = await forkProject(db, app.jobs, config.storages, {
      source: ctx.project, creator: user, namespace, namespaceFullPath: paths.fullPath,
      ...(input.name ? { name: input.name } : {}),
      ...(input.path ? { path: input.path } : {}),
      ...(input.description != null ? { description: input.description } : {}),
      ...(input.visibility ? { visibilityLevel: visibilityLevel(input.visibility) } : {}),
      ...(input.mr_default_target_self != null ? { mrDefaultTargetSelf: input.mr_default_target_self } : {}),
    });
    if (!result.ok) throw conflictFields(result.errors);
    reply.code(201);
    return send(reply, user, result.project);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/fork/:forked_from_id', auth: 'required', params: linkParams,
    schema: {
      summary: 'Mark a project as forked from another (no repository change)', tags: ['projects'], response: { 201: ProjectSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const source = await loadProject(request, input.forked_from_id).catch(() => {
      throw notFound('Source Project');
    });
    if (!canOnProject(source.actor, 'fork_project', source.project)) throw forbidden();
    if (source.project.id === ctx.project.id) throw apiError(409, 'Project already forked');
    if (!await linkFork(db, ctx.project.id, source.project.id)) throw apiError(409, 'Project already forked');
    reply.code(201);
    return send(reply, caller.user, (await findProjectById(db, ctx.project.id))!);
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/fork', auth: 'required', params: idParams,
    schema: {
      summary: 'Remove the forked-from relationship (304 when not a fork)', tags: ['projects'],
      response: { 204: Type.Null(), 304: Type.Null() },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    // remove_fork_project is the Owner's (ProjectPolicy).
    if (!ctx.actor.user?.admin && ctx.actor.accessLevel < ACCESS_LEVELS.owner) throw forbidden();
    const removed = await unlinkFork(db, ctx.project.id, caller.user.id);
    return reply.code(removed ? 204 : 304).send();
  });
};

export default forks;
