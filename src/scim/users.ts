/**
 * The Users resource of a group's SCIM API (RFC 7644 §3; the Service's API::Scim):
 * list with filter and pagination, show, create, patch and delete. Every route authenticates
 * with the group's SCIM token (group.ts) and answers `application/scim+json`.
 *
 * DELETE deprovisions as `active: false` does and keeps the identity (inactive), as the Service
 * does: the account is not deleted (scim_setup.md, "Deprovisioning does not delete the user
 * account"), and the identity provider may provision the same user again later.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { provisionUser } from '../domain/scim/provision-user.ts';
import { deprovision } from '../domain/scim/provisioning.ts';
import { findScimUsers } from '../domain/scim/scim.finder.ts';
import { findScimIdentity } from '../domain/scim/scim.queries.ts';
import { updateScimUser } from '../domain/scim/update-scim-user.ts';
import { invalidValue, scimConflict, scimError, scimNotFound } from './errors.ts';
import { parseUserFilter } from './filter.ts';
import { authenticateScim, type ScimContext } from './group.ts';
import { nameAfter, parsePatch } from './patch.ts';
import { LIST_SCHEMA, parseCreateBody, presentScimUser, ScimErrorSchema, ScimListSchema, ScimUserSchema } from './resources.ts';
import { checkBody, stringProblem } from './values.ts';

export const SCIM_CONTENT_TYPE = 'application/scim+json';
/** A SCIM User is a few hundred bytes; 64 KiB leaves room for any identity provider's extras. */
export const SCIM_BODY_LIMIT = 64 * 1024;
/** The Service's page size when `count` is not given, and its largest. */
const DEFAULT_COUNT = 20;
const MAX_COUNT = 100;
const MAX_INT = 2_147_483_647;

const errors = { 400: ScimErrorSchema, 401: ScimErrorSchema, 404: ScimErrorSchema, 409: ScimErrorSchema };

/** startIndex and count (RFC 7644 §3.4.2.4): 1-based; below 1 is 1; a negative count is 0. */
function pageParam(name: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^-?\d{1,12}$/.test(value)) throw invalidValue(`${name} must be an integer`);
  return Math.max(-MAX_INT, Math.min(Number(value), MAX_INT));
}

/** The identity the path's `:id` names (its extern_uid), or 404 in SCIM's shape. */
async function loadIdentity(request: FastifyRequest, ctx: ScimContext) {
  const id = (request.params as { id: string }).id;
  const identity = stringProblem(id) ? undefined : await findScimIdentity(request.server.kiln.db, ctx.id, id);
  if (!identity) throw scimNotFound(`Resource ${id} not found`);
  return identity;
}

function send(reply: FastifyReply, code: number, body: unknown): FastifyReply {
  return reply.code(code).type(SCIM_CONTENT_TYPE).send(body);
}

const users: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  const base = { config: { web: true, ownErrors: true }, bodyLimit: SCIM_BODY_LIMIT };
  const tags = ['scim'];

  // The spec names the base path with a trailing slash (`…/Users/`): both spellings are served.
  for (const url of ['/Users', '/Users/']) app.get(url, {
    ...base,
    schema: { summary: "List a group's SCIM users", tags, hide: url.endsWith('/'), response: { 200: ScimListSchema, ...errors } },
  }, async (request, reply) => {
    const ctx = await authenticateScim(request);
    const query = request.query as Record<string, unknown>;
    const filter = parseUserFilter(query.filter);
    const startIndex = Math.max(pageParam('startIndex', query.startIndex) ?? 1, 1);
    const requested = pageParam('count', query.count);
    const count = requested === undefined ? DEFAULT_COUNT : Math.min(Math.max(requested, 0), MAX_COUNT);
    const { total, rows } = await findScimUsers(db, ctx.id, filter, startIndex - 1, count);
    return send(reply, 200, {
      schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: rows.length, startIndex,
      Resources: rows.map((r) => presentScimUser(r, ctx.baseUrl)),
    });
  });

  app.get('/Users/:id', {
    ...base,
    schema: { summary: 'Show a SCIM user', tags, response: { 200: ScimUserSchema, ...errors } },
  }, async (request, reply) => {
    const ctx = await authenticateScim(request);
    return send(reply, 200, presentScimUser(await loadIdentity(request, ctx), ctx.baseUrl));
  });

  for (const url of ['/Users', '/Users/']) app.post(url, {
    ...base,
    schema: { summary: 'Provision a SCIM user', tags, hide: url.endsWith('/'), response: { 201: ScimUserSchema, ...errors } },
  }, async (request, reply) => {
    const ctx = await authenticateScim(request);
    checkBody(request.body);
    const input = parseCreateBody(request.body);
    const result = await provisionUser(db, ctx, input);
    if (!result.ok) throw result.reason === 'conflict' ? scimConflict(result.detail) : invalidValue(result.detail);
    const resource = presentScimUser(result.identity, ctx.baseUrl);
    // RFC 7644 §3.3: the created resource's URI in Location.
    reply.header('location', resource.meta.location);
    return send(reply, 201, resource);
  });

  app.patch('/Users/:id', {
    ...base,
    schema: { summary: 'Update or deprovision a SCIM user', tags, response: { 204: Type.Null(), 412: ScimErrorSchema, ...errors } },
  }, async (request, reply) => {
    const ctx = await authenticateScim(request);
    checkBody(request.body);
    const changes = parsePatch(request.body);
    const identity = await loadIdentity(request, ctx);
    const result = await updateScimUser(db, ctx, identity, {
      active: changes.active, externUid: changes.externUid, userName: changes.userName, email: changes.email,
      name: nameAfter(identity.user.name, changes),
    });
    if (!result.ok) throw updateError(result.reason, result.detail);
    return reply.code(204).send();
  });

  app.delete('/Users/:id', {
    ...base,
    schema: { summary: 'Deprovision a SCIM user', tags, response: { 204: Type.Null(), 412: ScimErrorSchema, ...errors } },
  }, async (request, reply) => {
    const ctx = await authenticateScim(request);
    const identity = await loadIdentity(request, ctx);
    const result = identity.active ? await deprovision(db, ctx, identity) : { ok: true as const };
    if (!result.ok) throw updateError(result.reason, result.detail);
    return reply.code(204).send();
  });
};

function updateError(reason: 'conflict' | 'invalid' | 'last_owner', detail: string) {
  if (reason === 'conflict') return scimConflict(detail);
  if (reason === 'invalid') return invalidValue(detail);
  // The Service answers a refused deprovisioning with its generic SCIM error status, 412.
  return scimError(412, detail);
}

export default users;
