/**
 * Project and group access tokens (the Service's lib/api/resource_access_tokens.rb, 15.2):
 * GET/POST /projects/:id/access_tokens, GET/DELETE /projects/:id/access_tokens/:token_id, and the
 * same under /groups/:id. Managing them takes Maintainer on a project and Owner on a group;
 * bots cannot make more bots. Each token is backed by a bot user (domain/tokens/resource-access-tokens.ts).
 * Refusals are the Service's: 401 on the reads, 400 with the create or revoke service's message on
 * the writes (after a 404 for a project, group or token the caller cannot see).
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
import { badRequest, invalidParams, notFound, unauthorized } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { audit, ROLE_NAMES } from '../../audit.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { PersonalAccessTokenSchema, presentPersonalAccessToken } from '../../entities/personal-access-token.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';
import { idFromText } from '../../../db/constraints.ts';

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
// `token_id` is a String in the Service: any text is looked up, and what names no token answers 404 quoting it.
const oneParams = defineParams({ id: P.string(), token_id: P.string({ maxLength: 1024, description: 'token id' }) });
const createParams = defineParams({
  id: P.string(),
  name: P.string({ description: 'the token name (also the bot user\'s name)' }),
  scopes: P.array(P.oneOf(RESOURCE_BOT_SCOPES as readonly string[]), { description: 'api, read_api, read_repository, write_repository' }),
  access_level: P.optional(P.integer({ default: DEFAULT_ACCESS_LEVEL, description: '10, 20, 30, 40 (default) or 50' })),
  expires_at: P.optional(P.date({ description: 'YYYY-MM-DD' })),
});

/** Ruby's Array#inspect of strings, as the Service's audit message prints a token's scopes. */
const rubyInspect = (items: readonly string[]) => `[${items.map((i) => JSON.stringify(i)).join(', ')}]`;

const resourceAccessTokens: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const host = new URL(config.externalUrl).hostname;

  interface Loaded {
    resource: Resource;
    level: number;
    fullPath: string;
    /** read/create/destroy_resource_access_tokens: Maintainer on a project, Owner on a group, never a bot. */
    mayManage: boolean;
  }

  /** The project or group as the caller may see it (404 otherwise), and whether they may manage its tokens. */
  async function loadResource(request: FastifyRequest, { user: caller }: Caller, id: string, kind: Resource['kind']): Promise<Loaded> {
    if (kind === 'project') {
      const ctx = await loadProject(request, id);
      return {
        resource: { sourceType: 'Project', id: ctx.project.id, kind }, level: caller.admin ? 50 : ctx.actor.accessLevel,
        fullPath: `${ctx.namespace.fullPath}/${ctx.project.path}`,
        mayManage: canOnProject(ctx.actor, 'admin_members', ctx.project) && !isBot(caller),
      };
    }
    const ctx = await loadGroup(request, id);
    return {
      resource: { sourceType: 'Namespace', id: ctx.group.id, kind }, level: caller.admin ? 50 : ctx.actor.accessLevel,
      fullPath: ctx.fullPath, mayManage: canOnGroup(ctx.actor, 'admin_group', ctx.group) && !isBot(caller),
    };
  }

  /**
   * Lists and reads answer 401 to those who may not manage the tokens (the Service's routes say
   * `unauthorized!` there, lib/api/resource_access_tokens.rb), not 403.
   */
  async function readableResource(request: FastifyRequest, caller: Caller, id: string, kind: Resource['kind']): Promise<Loaded> {
    const loaded = await loadResource(request, caller, id, kind);
    if (!loaded.mayManage) throw unauthorized();
    return loaded;
  }

  const findToken = (resource: Resource, tokenId: string) => {
    const id = idFromText(tokenId);
    return id === null ? undefined : findResourceToken(db, resource.sourceType, resource.id, id);
  };

  /** The audit event of the Service's EE create/revoke services: on the project or group, also for a refused attempt. */
  const auditToken = (request: FastifyRequest, loaded: Loaded, message: string, token?: { id: number; botName: string }) => audit(request, {
    entityType: loaded.resource.kind === 'project' ? 'Project' : 'Group', entityId: loaded.resource.id, entityPath: loaded.fullPath,
    ...(token ? { target: { id: token.id, type: 'PersonalAccessToken', details: token.botName } } : {}), message,
  });

  for (const kind of ['project', 'group'] as const) {
    const base = kind === 'project' ? '/projects/:id/access_tokens' : '/groups/:id/access_tokens';
    const tags = [`${kind} access tokens`];
    const notFoundToken = (tokenId: string) => notFound(`Could not find ${kind} access token with token_id: ${tokenId}`);

    route(app, {
      method: 'GET', url: base, auth: 'required', params: listParams,
      schema: { summary: `The ${kind}'s access tokens`, tags, response: { 200: Type.Array(ResourceAccessTokenSchema) } },
    }, async ({ request, reply, input, caller }) => {
      const { resource } = await readableResource(request, caller, input.id, kind);
      const rows = await paginate(
        db,
        request,
        reply,
        resourceTokensQuery(db, resource.sourceType, resource.id).orderBy('personal_access_tokens.id'),
      );
      return rows.map(present);
    });

    route(app, {
      method: 'GET', url: `${base}/:token_id`, auth: 'required', params: oneParams,
      schema: { summary: `One of the ${kind}'s access tokens`, tags, response: { 200: ResourceAccessTokenSchema } },
    }, async ({ request, input, caller }) => {
      const { resource } = await readableResource(request, caller, input.id, kind);
      const row = await findToken(resource, input.token_id);
      if (!row) throw notFoundToken(input.token_id);
      return present(row);
    });

    route(app, {
      method: 'POST', url: base, auth: 'required', params: createParams,
      schema: {
        summary: `Create a ${kind} access token (and its bot user); the token is shown once`,
        tags,
        response: { 201: ResourceAccessTokenWithTokenSchema },
      },
    }, async ({ request, reply, input, caller }) => {
      const loaded = await loadResource(request, caller, input.id, kind);
      const accessLevel = input.access_level ?? DEFAULT_ACCESS_LEVEL;
      if (!(ACCESS_LEVEL_VALUES as readonly number[]).includes(accessLevel)) {
        throw invalidParams(['access_level does not have a valid value']);
      }
      // ResourceAccessTokens::CreateService refuses in its own words, which the route answers as 400.
      const result = loaded.mayManage
        ? await createResourceToken(db, loaded.resource, { id: caller.user.id, level: loaded.level }, {
          // `scopes=` (empty) is Grape's nil: no scopes, which the model answers as blank (issue 13's fuzzer).
          name: input.name, scopes: input.scopes ?? [], accessLevel, expiresAt: input.expires_at ?? null,
        }, host)
        : { ok: false as const, message: `User does not have permission to create ${kind} access token` };
      if (!result.ok) {
        await auditToken(request, loaded, `Attempted to create ${kind} access token but failed with message: ${result.message}`);
        throw badRequest(result.message);
      }
      const { row, bot } = result.value;
      const scopes = rubyInspect(input.scopes ?? []);
      // ee/app/services/ee/resource_access_tokens/create_service.rb: the project's message names the level, the group's says "group token".
      await auditToken(request, loaded, kind === 'project'
        ? `Created project access token with token_id: ${row.id} with scopes: ${scopes} and ${ROLE_NAMES[accessLevel]} access level.`
        : `Created group token with token_id: ${row.id} with scopes: ${scopes}.`, { id: row.id, botName: bot.name });
      return reply.code(201).send({ ...present(result.value.row), token: result.value.token });
    });

    route(app, {
      method: 'DELETE', url: `${base}/:token_id`, auth: 'required', params: oneParams,
      schema: { summary: `Revoke a ${kind} access token and remove its bot user`, tags, response: { 204: Type.Null() } },
    }, async ({ request, reply, input, caller }) => {
      const loaded = await loadResource(request, caller, input.id, kind);
      const row = await findToken(loaded.resource, input.token_id);
      const bot = row ? await findUserById(db, row.user_id) : undefined;
      if (!row || !bot) throw notFoundToken(input.token_id);
      // The route finds the token first; ResourceAccessTokens::RevokeService then refuses, answered as 400 with its message.
      const result = loaded.mayManage
        ? await revokeResourceToken(db, row, bot, { hardDelete: false, host, dataDir: config.dataDir, shards: config.storages })
        : { ok: false as const, message: `${caller.user.name} cannot delete ${bot.name}` };
      const target = { id: row.id, botName: bot.name };
      if (!result.ok) {
        const attempt = `Attempted to revoke ${kind} access token with token_id: ${row.id}, but failed with message: ${result.message}`;
        await auditToken(request, loaded, attempt, target);
        throw badRequest(result.message);
      }
      await auditToken(request, loaded, `Revoked ${kind} access token with token_id: ${row.id}`, target);
      return reply.code(204).send();
    });
  }
};

export default resourceAccessTokens;
