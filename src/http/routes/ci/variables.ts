/**
 * CI/CD variables at the three levels of the Service (lib/api/ci/variables.rb,
 * lib/api/group_variables.rb, lib/api/admin/ci/variables.rb as of 15.2): a project's (Maintainer:
 * admin_build), a group's (Owner: admin_group) and the instance's (administrators). Values are
 * shown to those who may manage them, and stored only encrypted. A key that names more than one
 * variable (several environment scopes) needs `filter[environment_scope]`, else 409.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { sealerFor, type Sealer } from '../../../domain/ci-variables/encryption.ts';
import {
  deleteVariable, findOwnerVariables, ownerVariablesQuery, type VariableOwner,
} from '../../../domain/ci-variables/ci-variables.queries.ts';
import { createVariable, openVariable, updateVariable, type ChangeResult } from '../../../domain/ci-variables/change-variable.ts';
import { MAX_KEY, MAX_SCOPE, VARIABLE_TYPES } from '../../../domain/ci-variables/variable-rules.ts';
import type { CiVariableRow } from '../../../db/tables/ci-variables.ts';
import { conflict, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { CiVariableSchema, InstanceVariableSchema, presentCiVariable, presentInstanceVariable } from '../../entities/ci-variable.ts';
import { route } from '../../route.ts';

const attributes = {
  protected: P.optional(P.boolean({ description: 'only protected refs receive it' })),
  masked: P.optional(P.boolean({ description: 'hidden in job logs; the value must be maskable' })),
  raw: P.optional(P.boolean({ description: 'the runner does not expand variable references in it' })),
  variable_type: P.optional(P.oneOf(VARIABLE_TYPES)),
};
const scoped = { environment_scope: P.optional(P.string({ description: 'environments that receive it; `*` for all' })) };
const filter = {
  filter: P.optional(
    P.object({ environment_scope: P.optional(P.string({ ownErrors: true })) }, { description: 'filter[environment_scope]' }),
  ),
};
const owner = { id: P.string({ description: 'ID or URL-encoded full path' }) };
const key = { key: P.string({ description: 'the key of the variable' }) };
const listParams = defineParams({ ...owner, ...paginationParams });

// Project and group variables have an owner and environment scopes; instance variables neither.
const scopedParams = {
  list: listParams,
  show: defineParams({ ...owner, ...key, ...filter }),
  create: defineParams({ ...owner, ...scoped, ...key, value: P.string(), ...attributes }),
  update: defineParams({ ...owner, ...scoped, ...key, value: P.optional(P.string()), ...attributes, ...filter }),
};
const instanceParams = {
  list: defineParams({ ...paginationParams }),
  show: defineParams({ ...key }),
  create: defineParams({ ...key, value: P.string(), ...attributes }),
  update: defineParams({ ...key, value: P.optional(P.string()), ...attributes }),
};

/** A key or scope that no variable can have is not looked up (NUL bytes never reach PostgreSQL). */
function lookable(key: string, scope: string | undefined): boolean {
  return key.length <= MAX_KEY && /^[a-zA-Z0-9_]+$/.test(key)
    && (scope === undefined || (scope.length <= MAX_SCOPE && !scope.includes('\0')));
}

interface Level {
  schema: typeof CiVariableSchema | typeof InstanceVariableSchema;
  present: (v: ReturnType<typeof openVariable>) => unknown;
  /** The not-found resource name: `404 Variable Not Found`, `404 GroupVariable Not Found`, … */
  resource: string;
  /** Loads and authorizes the owner named by the request. */
  /** Instance variables have no owner id; project and group routes always have `:id`. */
  owner: (request: FastifyRequest, id: string | undefined) => Promise<VariableOwner>;
}

const ciVariables: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const sealer = (): Promise<Sealer> => sealerFor(config.dataDir);
  // The key is made at first boot (as the signing keys are), and an unreadable one stops start-up.
  await sealer();

  async function findOne(
    level: Level, o: VariableOwner, input: { key: string; filter?: { environment_scope?: string } },
  ): Promise<CiVariableRow> {
    const scope = input.filter?.environment_scope;
    if (!lookable(input.key, scope)) throw notFound(level.resource);
    const rows = await findOwnerVariables(db, o, input.key, scope);
    if (rows.length === 0) throw notFound(level.resource);
    if (rows.length > 1) throw conflict("There are multiple variables with provided parameters. Please use 'filter[environment_scope]'");
    return rows[0];
  }

  function answer(level: Level, reply: FastifyReply, result: ChangeResult | null, code: number) {
    if (result === null) throw notFound(level.resource);
    if (!result.ok) throw validationFailed(result.errors);
    return reply.code(code).send(level.present(result.variable));
  }

  function routes(prefix: string, level: Level, params: typeof scopedParams | typeof instanceParams, tag: string) {
    route(app, {
      method: 'GET', url: prefix, auth: 'required', params: params.list,
      schema: { summary: `List ${tag} variables`, tags: ['ci variables'], response: { 200: Type.Array(level.schema) } },
    }, async ({ request, reply, input }) => {
      const o = await level.owner(request, 'id' in input ? input.id : undefined);
      const s = await sealer();
      const rows = await paginate(db, request, reply, ownerVariablesQuery(db, o));
      return rows.map((row) => level.present(openVariable(s, row)));
    });

    route(app, {
      method: 'GET', url: `${prefix}/:key`, auth: 'required', params: params.show,
      schema: { summary: `A ${tag} variable`, tags: ['ci variables'], response: { 200: level.schema } },
    }, async ({ request, input }) => {
      const o = await level.owner(request, 'id' in input ? input.id : undefined);
      const row = await findOne(level, o, input);
      return level.present(openVariable(await sealer(), row));
    });

    route(app, {
      method: 'POST', url: prefix, auth: 'required', params: params.create,
      schema: { summary: `Create a ${tag} variable`, tags: ['ci variables'], response: { 201: level.schema } },
    }, async ({ request, reply, input }) => {
      const o = await level.owner(request, 'id' in input ? input.id : undefined);
      return answer(level, reply, await createVariable(db, await sealer(), o, input), 201);
    });

    route(app, {
      method: 'PUT', url: `${prefix}/:key`, auth: 'required', params: params.update,
      schema: { summary: `Update a ${tag} variable`, tags: ['ci variables'], response: { 200: level.schema } },
    }, async ({ request, reply, input }) => {
      const o = await level.owner(request, 'id' in input ? input.id : undefined);
      const row = await findOne(level, o, input);
      const { key: _key, ...changes } = input;
      return answer(level, reply, await updateVariable(db, await sealer(), row, changes), 200);
    });

    route(app, {
      method: 'DELETE', url: `${prefix}/:key`, auth: 'required', params: params.show,
      schema: { summary: `Delete a ${tag} variable`, tags: ['ci variables'] },
    }, async ({ request, reply, input }) => {
      const o = await level.owner(request, 'id' in input ? input.id : undefined);
      const row = await findOne(level, o, input);
      checkUnmodifiedSince(request, row.updated_at);
      await deleteVariable(db, row.id);
      return reply.code(204).send();
    });
  }

  routes('/projects/:id/variables', {
    schema: CiVariableSchema, present: presentCiVariable, resource: 'Variable',
    owner: async (request, id = '') => {
      const ctx = await loadProject(request, id);
      authorizeProject(ctx, 'admin_build');
      return { kind: 'project', id: ctx.project.id };
    },
  }, scopedParams, 'project');

  routes('/groups/:id/variables', {
    schema: CiVariableSchema, present: presentCiVariable, resource: 'GroupVariable',
    owner: async (request, id = '') => {
      const ctx = await loadGroup(request, id);
      authorizeGroup(ctx, 'admin_group');
      return { kind: 'group', id: ctx.group.id };
    },
  }, scopedParams, 'group');

  routes('/admin/ci/variables', {
    schema: InstanceVariableSchema, present: presentInstanceVariable, resource: 'InstanceVariable',
    owner: async (request) => {
      authenticatedAsAdmin(request);
      return { kind: 'instance' };
    },
  }, instanceParams, 'instance');
};

export default ciVariables;
