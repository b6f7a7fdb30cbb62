/**
 * Project and group badges (the Service's lib/api/badges.rb with API::Helpers::BadgesHelpers,
 * 15.2): `/projects/:id/badges` and `/groups/:id/badges` list (a project's with the badges of its
 * group and the group's ancestors, kind `group`; `name` filters), show, create, update, delete, and
 * `GET …/badges/render` previews a link and image without storing them.
 *
 * Reading follows the project or group; writing and previewing take admin_project (Maintainer) or
 * admin_group (Owner). Rendered URLs fill the placeholders for the project, or for a group's
 * newest project the caller can see (GroupProjectsFinder's first); without one they stay as written.
 * A group's badge cannot be deleted through a project (403, the Service's words); a missing badge
 * is `404 Not found`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ProjectRow } from '../../../db/tables/projects.ts';
import { badgeErrors, changeBadge, createBadge, type BadgeProjectValues, type BadgeWrite } from '../../../domain/badges/badges.ts';
import { badgesQuery, deleteBadge, findHeldBadge, type BadgeHolder } from '../../../domain/badges/badges.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { projectsInNamespaces } from '../../../domain/projects/projects.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { resolveCommit } from '../../../domain/repositories/git-read.ts';
import { forbiddenMessage, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import { BadgeListSchema, BadgeSchema, BasicBadgeDetailsSchema, presentBadge, presentBasicBadge } from '../../entities/badge.ts';
import { route } from '../../route.ts';

type SourceType = 'project' | 'group';

const url = (description: string) => P.string({ maxLength: 8192, description });
const listParams = defineParams({
  id: P.string(), ...paginationParams, name: P.optional(P.name({ description: 'only badges of this name' })),
});
const renderParams = defineParams({ id: P.string(), link_url: url('URL of the badge link'), image_url: url('URL of the badge image') });
const badgeParams = defineParams({ id: P.string(), badge_id: P.integer() });
const createParams = defineParams({
  id: P.string(), link_url: url('URL of the badge link'), image_url: url('URL of the badge image'),
  name: P.optional(P.name({ description: 'name of the badge' })),
});
const updateParams = defineParams({
  id: P.string(), badge_id: P.integer(),
  link_url: P.optional(url('URL of the badge link')), image_url: P.optional(url('URL of the badge image')),
  name: P.optional(P.name({ description: 'name of the badge' })),
});

interface Source {
  holder: BadgeHolder;
  /** What the placeholders render as, read when first needed. */
  values: () => Promise<BadgeProjectValues | null>;
}

const badges: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function valuesOf(project: ProjectRow, fullPath: string): Promise<BadgeProjectValues> {
    const branch = project.default_branch;
    const sha = branch ? await resolveCommit(projectRepository(config.storages, project).gitDir, `refs/heads/${branch}`) : null;
    return { fullPath, id: project.id, defaultBranch: branch, commitSha: sha };
  }

  function once<T>(fn: () => Promise<T>): () => Promise<T> {
    let p: Promise<T> | undefined;
    return () => (p ??= fn());
  }

  /** find_source, then find_source_if_admin's authorize_admin_source! when `admin`. */
  async function loadSource(request: FastifyRequest, type: SourceType, id: string, admin: boolean): Promise<Source> {
    if (type === 'project') {
      const ctx = await loadProject(request, id);
      if (admin) authorizeProject(ctx, 'admin_project');
      const fullPath = `${ctx.namespace.fullPath}/${ctx.project.path}`;
      return { holder: { projectId: ctx.project.id, groupIds: ctx.lineage }, values: once(() => valuesOf(ctx.project, fullPath)) };
    }
    const ctx = await loadGroup(request, id);
    if (admin) authorizeGroup(ctx, 'admin_group');
    return {
      holder: { groupIds: [ctx.group.id] },
      values: once(async () => {
        // GroupProjectsFinder's first: the group's newest project the caller can see.
        const projects = await projectsInNamespaces(db, [ctx.group.id]).orderBy('id', 'desc').limit(100).execute();
        const viewer = request.caller?.user ?? null;
        const ns = (await namespacePathsById(db, [ctx.group.id])).get(ctx.group.id);
        if (!ns) return null;
        for (const project of projects) {
          if (canOnProject(await projectActor(db, viewer, project.id, ns.lineage), 'read_project', project)) {
            return valuesOf(project, `${ns.fullPath}/${project.path}`);
          }
        }
        return null;
      }),
    };
  }

  function written(result: BadgeWrite) {
    if (!result.ok) throw validationFailed(result.errors);
    return result.badge;
  }

  for (const type of ['project', 'group'] as const) {
    const base = `/${type}s/:id/badges`;
    const tags = [`${type} badges`];

    route(app, {
      method: 'GET', url: base, auth: 'optional', params: listParams,
      schema: { summary: `A ${type}'s badges`, tags, response: { 200: BadgeListSchema } },
    }, async ({ request, reply, input }) => {
      const source = await loadSource(request, type, input.id, false);
      const rows = await paginate(db, request, reply, badgesQuery(db, source.holder, input.name));
      const values = rows.length ? await source.values() : null;
      return rows.map((b) => presentBadge(b, values));
    });

    route(app, {
      method: 'GET', url: `${base}/render`, auth: 'required', params: renderParams,
      schema: { summary: 'Preview a badge: its URLs rendered, nothing stored', tags, response: { 200: BasicBadgeDetailsSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, type, input.id, true);
      const errors = badgeErrors(input);
      if (errors) throw validationFailed(errors);
      return presentBasicBadge({ name: null, link_url: input.link_url, image_url: input.image_url }, await source.values());
    });

    route(app, {
      method: 'GET', url: `${base}/:badge_id`, auth: 'optional', params: badgeParams,
      schema: { summary: `A badge of a ${type}`, tags, response: { 200: BadgeSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, type, input.id, false);
      const badge = await findHeldBadge(db, source.holder, input.badge_id);
      if (!badge) throw recordNotFound();
      return presentBadge(badge, await source.values());
    });

    route(app, {
      method: 'POST', url: base, auth: 'required', params: createParams,
      schema: { summary: `Add a badge to a ${type}`, tags, response: { 201: BadgeSchema } },
    }, async ({ request, reply, input }) => {
      const source = await loadSource(request, type, input.id, true);
      const holder = source.holder.projectId !== undefined
        ? { projectId: source.holder.projectId }
        : { groupId: source.holder.groupIds[0] };
      const badge = written(await createBadge(db, {
        linkUrl: input.link_url, imageUrl: input.image_url, name: input.name ?? null, holder,
      }));
      return reply.code(201).send(presentBadge(badge, await source.values()));
    });

    route(app, {
      method: 'PUT', url: `${base}/:badge_id`, auth: 'required', params: updateParams,
      schema: { summary: `Update a badge of a ${type}`, tags, response: { 200: BadgeSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, type, input.id, true);
      // Like the Service, a project's endpoint finds (and so updates) its group's badges too.
      const badge = await findHeldBadge(db, source.holder, input.badge_id);
      if (!badge) throw recordNotFound();
      const changed = written(await changeBadge(db, badge, { linkUrl: input.link_url, imageUrl: input.image_url, name: input.name }));
      return presentBadge(changed, await source.values());
    });

    route(app, {
      method: 'DELETE', url: `${base}/:badge_id`, auth: 'required', params: badgeParams,
      schema: { summary: `Remove a badge from a ${type}`, tags, response: { 204: Type.Null() } },
    }, async ({ request, reply, input }) => {
      const source = await loadSource(request, type, input.id, true);
      const badge = await findHeldBadge(db, source.holder, input.badge_id);
      if (!badge) throw recordNotFound();
      if (badge.type === 'GroupBadge' && type === 'project') {
        throw forbiddenMessage('To delete a Group badge please use the Group endpoint');
      }
      await deleteBadge(db, badge.id);
      return reply.code(204).send();
    });
  }
};

export default badges;
