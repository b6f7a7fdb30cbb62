/**
 * Deploy keys (the Service's lib/api/deploy_keys.rb): a project's keys for Maintainers
 * (authorize_admin_project) — list, show, add (an existing key the user may reach is enabled
 * rather than created again), update `can_push` and the title, enable an existing key, remove —
 * and the instance's keys for administrators (`GET /deploy_keys`, `POST /deploy_keys` for a
 * public key), and `GET /users/:user_id/project_deploy_keys`. A deploy key authenticates git over
 * SSH (src/git/ssh-server.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { KeyRow } from '../../../db/tables/keys.ts';
import {
  addProjectDeployKey, createPublicDeployKey, enableDeployKey, isAccessibleDeployKey, removeProjectDeployKey,
} from '../../../domain/deploy-keys/deploy-keys.ts';
import {
  allDeployKeysQuery, creatorNames, deployKeysInProjectsQuery, findProjectDeployKey, linksOfKeys, projectDeployKeysQuery, projectIdsAtLevel,
  projectsByIds, updateDeployKeyTitle, updateDeployKeysProject,
} from '../../../domain/deploy-keys/deploy-keys.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { reachOf } from '../../../domain/projects/project.finder.ts';
import { findUserByIdOrUsername } from '../../../domain/users/users.queries.ts';
import { ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { forbidden, notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject, type ProjectContext } from '../../loaders/containers.ts';
import {
  DeployKeySchema, DeployKeysProjectSchema, presentDeployKey, presentDeployKeysProject,
} from '../../entities/deploy-key.ts';
import { presentProjectIdentity, type ProjectIdentity } from '../../entities/project.ts';
import { route } from '../../route.ts';

/** DeployKey#user when its creator is gone. */
const GHOST_NAME = 'Ghost User';

const keyFields = {
  key: P.string({ description: 'the public key, "<algorithm> <base64> [comment]"' }),
  title: P.name({ description: 'title of the key' }),
  expires_at: P.optional(P.dateTime({ description: 'expiry, ISO 8601 (YYYY-MM-DDTHH:MM:SSZ)' })),
};
const keyId = P.integer({ description: 'deploy key id' });

const params = {
  all: defineParams({ ...paginationParams, public: P.optional(P.boolean({ default: false, description: 'only public keys' })) }),
  createPublic: defineParams(keyFields),
  ofUser: defineParams({ user_id: P.name({ description: 'user id or username' }), ...paginationParams }),
  list: defineParams({ id: P.string({ description: 'project id or path' }), ...paginationParams }),
  one: defineParams({ id: P.string({ description: 'project id or path' }), key_id: keyId }),
  add: defineParams({
    id: P.string({ description: 'project id or path' }), ...keyFields,
    can_push: P.optional(P.boolean({ description: "may push to the project's repository" })),
  }),
  update: defineParams({
    id: P.string({ description: 'project id or path' }), key_id: keyId,
    title: P.optional(P.name({ description: 'title of the key' })),
    can_push: P.optional(P.boolean({ description: "may push to the project's repository" })),
  }, { atLeastOneOf: [['title', 'can_push']] }),
};

const tags = ['deploy_keys'];

const deployKeys: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function names(rows: KeyRow[]) {
    const found = await creatorNames(db, rows.map((r) => r.user_id));
    return (row: KeyRow) => found.get(row.user_id) ?? GHOST_NAME;
  }

  async function maintained(request: FastifyRequest, id: string): Promise<ProjectContext> {
    const ctx = await loadProject(request, id);
    // authorize_admin_project: Maintainer.
    authorizeProject(ctx, 'admin_project');
    return ctx;
  }

  /** projects_with_write_access of each key, as ProjectIdentity. */
  async function writableProjects(keys: KeyRow[]): Promise<Map<number, ProjectIdentity[]>> {
    const links = (await linksOfKeys(db, keys.map((k) => k.id))).filter((l) => l.can_push === 1);
    const projects = await projectsByIds(db, links.map((l) => l.project_id));
    const paths = await namespacePathsById(db, projects.map((p) => p.namespace_id));
    const identities = new Map<number, ProjectIdentity>();
    for (const p of projects) {
      const ns = paths.get(p.namespace_id);
      if (ns) identities.set(p.id, presentProjectIdentity(p, { namespace: ns.namespace, fullPath: ns.fullPath, fullName: ns.fullName }));
    }
    const out = new Map<number, ProjectIdentity[]>(keys.map((k) => [k.id, []]));
    for (const l of links) {
      const identity = identities.get(l.project_id);
      if (identity) out.get(l.deploy_key_id)?.push(identity);
    }
    return out;
  }

  route(app, {
    method: 'GET', url: '/deploy_keys', auth: 'required', params: params.all,
    schema: { summary: "The instance's deploy keys (administrators)", tags, response: { 200: Type.Array(DeployKeySchema) } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const rows = await paginate(db, request, reply, allDeployKeysQuery(db, input.public));
    const [name, writable] = [await names(rows), await writableProjects(rows)];
    return rows.map((r) => presentDeployKey(r, name(r), config.externalUrl, writable.get(r.id) ?? []));
  });

  route(app, {
    method: 'POST', url: '/deploy_keys', auth: 'required', params: params.createPublic,
    schema: { summary: 'Creates a public deploy key (administrators)', tags, response: { 201: DeployKeySchema } },
  }, async ({ request, reply, input }) => {
    const admin = authenticatedAsAdmin(request);
    const result = await createPublicDeployKey(db, {
      creator: admin, title: input.title, key: input.key, expiresAt: input.expires_at ?? null,
    });
    if (!result.ok) throw validationFailed(result.errors);
    return reply.code(201).send(presentDeployKey(result.value, admin.name, config.externalUrl));
  });

  route(app, {
    method: 'GET', url: '/users/:user_id/project_deploy_keys', auth: 'required', params: params.ofUser,
    schema: {
      summary: "The deploy keys of projects both the caller and the user maintain", tags, response: { 200: Type.Array(DeployKeySchema) },
    },
  }, async ({ request, reply, input, caller }) => {
    const user = await findUserByIdOrUsername(db, input.user_id);
    if (!user) throw notFound('User');
    // Project.visible_to_user_and_access_level(…, MAINTAINER) for the caller, and for the user too
    // unless they are the caller: only the projects both maintain.
    let ids = await projectIdsAtLevel(db, await reachOf(db, caller.user), ACCESS_LEVELS.maintainer);
    if (user.id !== caller.user.id) {
      const theirs = await projectIdsAtLevel(db, await reachOf(db, user), ACCESS_LEVELS.maintainer);
      ids = new Set([...ids].filter((id) => theirs.has(id)));
    }
    if (ids.size === 0) throw forbidden('No common authorized project found');
    const rows = await paginate(db, request, reply, deployKeysInProjectsQuery(db, [...ids]));
    const name = await names(rows);
    return rows.map((r) => presentDeployKey(r, name(r), config.externalUrl));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deploy_keys', auth: 'required', params: params.list,
    schema: { summary: "A project's deploy keys", tags, response: { 200: Type.Array(DeployKeysProjectSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await maintained(request, input.id);
    const rows = await paginate(db, request, reply, projectDeployKeysQuery(db, ctx.project.id));
    const name = await names(rows);
    return rows.map((r) => presentDeployKeysProject(r, name(r), config.externalUrl));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/deploy_keys/:key_id', auth: 'required', params: params.one,
    schema: { summary: 'One of a project\'s deploy keys', tags, response: { 200: DeployKeysProjectSchema } },
  }, async ({ request, input }) => {
    const ctx = await maintained(request, input.id);
    const row = await findProjectDeployKey(db, ctx.project.id, input.key_id);
    // find_by!: ActiveRecord's RecordNotFound.
    if (!row) throw recordNotFound();
    return presentDeployKeysProject(row, (await names([row]))(row), config.externalUrl);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/deploy_keys', auth: 'required', params: params.add,
    schema: {
      summary: 'Adds a deploy key to a project (an existing key the user may use is enabled)', tags,
      response: { 201: DeployKeysProjectSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await maintained(request, input.id);
    const result = await addProjectDeployKey(db, ctx.project.id, {
      creator: caller.user, title: input.title, key: input.key.trim(), expiresAt: input.expires_at ?? null,
      canPush: input.can_push ?? false,
    });
    if (!result.ok) throw validationFailed(result.errors);
    const row = result.value;
    return reply.code(201).send(presentDeployKeysProject(row, (await names([row]))(row), config.externalUrl));
  });

  route(app, {
    method: 'PUT', url: '/projects/:id/deploy_keys/:key_id', auth: 'required', params: params.update,
    schema: {
      summary: "Updates a project's deploy key: can_push, and the title of a key the user may change", tags,
      response: { 200: DeployKeysProjectSchema },
    },
  }, async ({ request, input, caller }) => {
    const ctx = await maintained(request, input.id);
    const row = await findProjectDeployKey(db, ctx.project.id, input.key_id);
    if (!row) throw recordNotFound();
    if (input.title !== undefined) {
      // DeployKeyPolicy update_deploy_key: administrators, or the maintainers of a project that
      // uses a private key; a public key's title is the administrators' (the title is left as it is).
      const mayRetitle = caller.user.admin === 1 || (row.public === 0 && await isAccessibleDeployKey(db, caller.user, row));
      const title = input.title.trim();
      if (mayRetitle && title === '') throw validationFailed({ 'deploy_key.title': ["can't be blank"] });
      if (mayRetitle) await updateDeployKeyTitle(db, row.id, title);
    }
    if (input.can_push !== undefined) await updateDeployKeysProject(db, row.link_id, input.can_push);
    const updated = await findProjectDeployKey(db, ctx.project.id, input.key_id);
    if (!updated) throw recordNotFound();
    return presentDeployKeysProject(updated, (await names([updated]))(updated), config.externalUrl);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/deploy_keys/:key_id/enable', auth: 'required', params: params.one,
    schema: { summary: 'Enables an existing deploy key on a project', tags, response: { 201: DeployKeySchema } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await maintained(request, input.id);
    const key = await enableDeployKey(db, caller.user, ctx.project.id, input.key_id);
    if (!key) throw notFound('Deploy key');
    return reply.code(201).send(presentDeployKey(key, (await names([key]))(key), config.externalUrl));
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/deploy_keys/:key_id', auth: 'required', params: params.one,
    schema: {
      summary: 'Removes a deploy key from a project (a private key no project uses is deleted)', tags, response: { 204: Type.Null() },
    },
  }, async ({ request, reply, input }) => {
    const ctx = await maintained(request, input.id);
    const row = await findProjectDeployKey(db, ctx.project.id, input.key_id);
    if (!row) throw notFound('Deploy key');
    await removeProjectDeployKey(db, row);
    return reply.code(204).send();
  });
};

export default deployKeys;
