/**
 * Project and group access tokens (the Service's lib/api/resource_access_tokens.rb, 15.2):
 * GET/POST /projects/:id/access_tokens, GET/DELETE /projects/:id/access_tokens/:token_id, and the
 * same under /groups/:id. Managing them takes Maintainer on a project and Owner on a group
 * (admin_resource_access_tokens); bots cannot make more bots. Each token is backed by a bot user
 * (domain/tokens/resource-access-tokens.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { isBot } from '../../../domain/users/user-kind.ts';
import { findResourceToken, resourceTokensQuery, type ResourceTokenRow } from '../../../domain/tokens/tokens.queries.ts';
import {
  ACCESS_LEVEL_VALUES, createResourceToken, DEFAULT_ACCESS_LEVEL, RESOURCE_BOT_SCOPES, revokeResourceToken, type Resource,
} from '../../../domain/tokens/resource-access-tokens.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { badRequest, forbidden, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { audit, ROLE_NAMES } from '../../audit.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { PersonalAccessTokenSchema, presentPersonalAccessToken } from '../../entities/personal-access-token.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

export const ResourceAccessTokenSchema = Type.Object({
  ...PersonalAccessTokenSchema.properties,
  access_level: Type.Integer(),
}, { title: 'ResourceAccessToken' });

export const ResourceAccessTokenWithTokenSchema = Type.Object({
  ...ResourceAccessTokenSchema.properties,
  token: Type.String(),
}, { title: 'ResourceAccessTokenWithToken' });

const present = (row: ResourceTokenRow) => ({ ...presentPersonalAccessToken(row), access_level: row.access_level });

const listParams = defineParams({ id: P.string(), ...paginationParams });
const oneParams = defineParams({ id: P.string(), token_id: P.integer() });
const createParams = defineParams({
  id: P.string(),
  name: P.string({ description: 'the token name (also the bot user\'s name)' }),
  scopes: P.array(P.oneOf(RESOURCE_BOT_SCOPES as readonly string[]), { description: 'api, read_api, read_repository, write_repository' }),
  access_level: P.optional(P.integer({ default: DEFAULT_ACCESS_LEVEL, description: '10, 20, 30, 40 (default) or 50' })),
  expires_at: P.optional(P.date({ description: 'YYYY-MM-DD' })),
});

const resourceAccessTokens: FastifyPluginAsync = async (app) => {
  const { db, config, authCache } = app.kiln;
  const host = new URL(config.externalUrl).hostname;

  /** The project or group, after read access (404) and the right to manage its tokens (403). */
  async function loadResource(
    request: FastifyRequest, caller: Caller, id: string, kind: Resource['kind'],
  ): Promise<{ resource: Resource; level: number; fullPath: string }> {
    if (kind === 'project') {
      const ctx = await loadProject(request, id);
      // admin_resource_access_tokens: Maintainer on a project.
      if (!canOnProject(ctx.actor, 'admin_members', ctx.project) || isBot(caller.user)) throw forbidden();
      return { resource: { sourceType: 'Project', id: ctx.project.id, kind }, level: caller.user.admin ? 50 : ctx.actor.accessLevel, fullPath: `${ctx.namespace.fullPath}/${ctx.project.path}` };
    }
    const ctx = await loadGroup(request, id);
    // admin_resource_access_tokens: Owner on a group.
    if (!canOnGroup(ctx.actor, 'admin_group', ctx.group) || isBot(caller.user)) throw forbidden();
    return { resource: { sourceType: 'Namespace', id: ctx.group.id, kind }, level: caller.user.admin ? 50 : ctx.actor.accessLevel, fullPath: ctx.fullPath };
  }

  for (const kind of ['project', 'group'] as const) {
    const base = kind === 'project' ? '/projects/:id/access_tokens' : '/groups/:id/access_tokens';
    const tags = [`${kind} access tokens`];
    const notFoundToken = (tokenId: number) => notFound(`Could not find ${kind} access token with token_id: ${tokenId}`);

    route(app, {
      method: 'GET', url: base, auth: 'required', params: listParams,
      schema: { summary: `The ${kind}'s access tokens`, tags, response: { 200: Type.Array(ResourceAccessTokenSchema) } },
    }, async ({ request, reply, input, caller }) => {
      const { resource } = await loadResource(request, caller, input.id, kind);
      const rows = await paginate(db, request, reply, resourceTokensQuery(db, resource.sourceType, resource.id).orderBy('personal_access_tokens.id'));
      return rows.map(present);
    });

    route(app, {
      method: 'GET', url: `${base}/:token_id`, auth: 'required', params: oneParams,
      schema: { summary: `One of the ${kind}'s access tokens`, tags, response: { 200: ResourceAccessTokenSchema } },
    }, async ({ request, input, caller }) => {
      const { resource } = await loadResource(request, caller, input.id, kind);
      const tokenId = input.token_id;
      const row = await findResourceToken(db, resource.sourceType, resource.id, tokenId);
      if (!row) throw notFoundToken(tokenId);
      return present(row);
    });

    route(app, {
      method: 'POST', url: base, auth: 'required', params: createParams,
      schema: { summary: `Create a ${kind} access token (and its bot user); the token is shown once`, tags, response: { 201: ResourceAccessTokenWithTokenSchema } },
    }, async ({ request, reply, input, caller }) => {
      const { resource, level, fullPath } = await loadResource(request, caller, input.id, kind);
      const accessLevel = input.access_level ?? DEFAULT_ACCESS_LEVEL;
      if (!(ACCESS_LEVEL_VALUES as readonly number[]).includes(accessLevel)) throw invalidParams(['access_level does not have a valid value']);
      const result = await createResourceToken(db, resource, { id: caller.user.id, level }, {
        // `scopes=` (empty) is Grape's nil: no scopes, which the model answers as blank (issue 13's fuzzer).
        name: input.name, scopes: input.scopes ?? [], accessLevel, expiresAt: input.expires_at ?? null,
      }, host);
      if (!result.ok) throw badRequest(result.message);
      const { row, bot } = result.value;
      await audit(request, {
        entityType: kind === 'project' ? 'Project' : 'Group', entityId: resource.id, entityPath: fullPath,
        target: { id: bot.id, type: 'User', details: bot.username },
        message: `Created ${kind} access token with token_id: ${row.id} with scopes: ${JSON.stringify(input.scopes)} and ${ROLE_NAMES[accessLevel]} access level.`,
      });
      return reply.code(201).send({ ...present(result.value.row), token: result.value.token });
    });

    route(app, {
      method: 'DELETE', url: `${base}/:token_id`, auth: 'required', params: oneParams,
      schema: { summary: `Revoke a ${kind} access token and remove its bot user`, tags, response: { 204: Type.Null() } },
    }, async ({ request, reply, input, caller }) => {
      const { resource, fullPath } = await loadResource(request, caller, input.id, kind);
      const tokenId = input.token_id;
      const row = await findResourceToken(db, resource.sourceType, resource.id, tokenId);
      const bot = row ? await findUserById(db, row.user_id) : undefined;
      if (!row || !bot) throw notFoundToken(tokenId);
      const result = await revokeResourceToken(db, row, bot, { hardDelete: false, host, dataDir: config.dataDir, shards: config.storages });
      authCache.invalidateToken('personal_access_token', row.id);
      authCache.invalidateUser(bot.id);
      if (!result.ok) throw badRequest(result.message);
      await audit(request, {
        entityType: kind === 'project' ? 'Project' : 'Group', entityId: resource.id, entityPath: fullPath,
        target: { id: bot.id, type: 'User', details: bot.username }, message: `Revoked ${kind} access token with token_id: ${row.id}`,
      });
      return reply.code(204).send();
    });
  }
};

export default resourceAccessTokens;
