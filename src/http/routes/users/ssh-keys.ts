/**
 * Users' SSH keys (spec, SSH keys; reference §2.1): the current user's keys under /user/keys, any
 * user's keys read publicly under /users/:user_id/keys (id or username), and administrators'
 * writes on another user's keys.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import type { KeyUsageType } from '../../../db/tables/keys.ts';
import { createKey } from '../../../domain/keys/create-key.ts';
import { deleteKey, findUserKey, userKeysQuery } from '../../../domain/keys/keys.queries.ts';
import { findUserByIdOrUsername } from '../../../domain/users/users.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { presentSshKey, SSHKeySchema } from '../../entities/ssh-key.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { route } from '../../route.ts';

const USAGE_TYPES = ['auth', 'signing', 'auth_and_signing'] as const;

const createFields = {
  title: P.string({ description: 'title of the key' }),
  key: P.string({ description: 'the public key, "<algorithm> <base64> [comment]"' }),
  expires_at: P.optional(P.dateTime({ description: 'expiry, ISO 8601 (YYYY-MM-DDTHH:MM:SSZ)' })),
  usage_type: P.optional(P.oneOf(USAGE_TYPES, { default: 'auth_and_signing', description: 'auth, signing or auth_and_signing' })),
};

const params = {
  list: defineParams({ ...paginationParams }),
  // The Service declares :key_id a String here, so a non-numeric id is simply not found.
  showOwn: defineParams({ key_id: P.string({ description: 'key id' }) }),
  create: defineParams(createFields),
  deleteOwn: defineParams({ key_id: P.integer({ description: 'key id' }) }),
  listOf: defineParams({ user_id: P.string({ description: 'user id or username' }), ...paginationParams }),
  showOf: defineParams({ id: P.integer({ description: 'user id' }), key_id: P.integer({ description: 'key id' }) }),
  createFor: defineParams({ user_id: P.integer({ description: 'user id' }), ...createFields }),
  deleteFor: defineParams({ user_id: P.integer({ description: 'user id' }), key_id: P.integer({ description: 'key id' }) }),
};

type CreateInput = { title: string; key: string; expires_at?: string; usage_type: KeyUsageType };

const tags = ['keys'];
const KeyList = Type.Array(SSHKeySchema);

const userKeys: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const present = (row: Parameters<typeof presentSshKey>[0], owner: UserRow) => presentSshKey(row, owner, config.externalUrl);

  async function addKey(owner: UserRow, input: CreateInput) {
    const result = await createKey(db, {
      userId: owner.id, title: input.title, key: input.key, expiresAt: input.expires_at ?? null, usageType: input.usage_type,
    });
    if (!result.ok) throw validationFailed(result.errors);
    return present(result.value, owner);
  }

  async function removeKey(request: FastifyRequest, owner: UserRow, keyId: number) {
    const key = await findUserKey(db, owner.id, keyId);
    if (!key) throw notFound('Key');
    checkUnmodifiedSince(request, key.updated_at);
    await deleteKey(db, key.id);
  }

  route(app, {
    method: 'GET', url: '/user/keys', auth: 'required', scopes: ['read_user'], params: params.list,
    schema: { summary: "The current user's SSH keys", tags, response: { 200: KeyList } },
  }, async ({ request, reply, caller }) => {
    const user = caller.user;
    const rows = await paginate(db, request, reply, userKeysQuery(db, user.id));
    return rows.map((row) => present(row, user));
  });

  route(app, {
    method: 'GET', url: '/user/keys/:key_id', auth: 'required', scopes: ['read_user'], params: params.showOwn,
    schema: { summary: "One of the current user's SSH keys", tags, response: { 200: SSHKeySchema } },
  }, async ({ input, caller }) => {
    const user = caller.user;
    const { key_id } = input;
    // Scoped to the caller, administrators included (reference §2.1).
    const key = /^\d{1,9}$/.test(key_id) ? await findUserKey(db, user.id, Number(key_id)) : undefined;
    if (!key) throw notFound('Key');
    return present(key, user);
  });

  route(app, {
    method: 'POST', url: '/user/keys', auth: 'required', params: params.create,
    schema: { summary: 'Adds an SSH key to the current user', tags, response: { 201: SSHKeySchema } },
  }, async ({ reply, input, caller }) => {
    reply.code(201);
    return addKey(caller.user, input);
  });

  route(app, {
    method: 'DELETE', url: '/user/keys/:key_id', auth: 'required', params: params.deleteOwn,
    schema: { summary: "Deletes one of the current user's SSH keys", tags },
  }, async ({ request, reply, input, caller }) => {
    const { key_id } = input;
    await removeKey(request, caller.user, key_id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'GET', url: '/users/:user_id/keys', auth: 'optional', scopes: ['read_user'], params: params.listOf,
    schema: { summary: "A user's SSH keys (by id or username; no authentication needed)", tags, response: { 200: KeyList } },
  }, async ({ request, reply, input }) => {
    const { user_id } = input;
    const owner = await findUserByIdOrUsername(db, user_id);
    if (!owner) throw notFound('User');
    const rows = await paginate(db, request, reply, userKeysQuery(db, owner.id));
    return rows.map((row) => present(row, owner));
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/keys/:key_id', auth: 'optional', scopes: ['read_user'], params: params.showOf,
    schema: { summary: "One of a user's SSH keys", tags, response: { 200: SSHKeySchema } },
  }, async ({ input }) => {
    const { id, key_id } = input;
    const owner = await userOr404(db, id);
    const key = await findUserKey(db, owner.id, key_id);
    if (!key) throw notFound('Key');
    return present(key, owner);
  });

  route(app, {
    method: 'POST', url: '/users/:user_id/keys', auth: 'required', params: params.createFor,
    schema: { summary: 'Adds an SSH key to a user (administrators)', tags, response: { 201: SSHKeySchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const owner = await userOr404(db, input.user_id);
    reply.code(201);
    return addKey(owner, input);
  });

  route(app, {
    method: 'DELETE', url: '/users/:user_id/keys/:key_id', auth: 'required', params: params.deleteFor,
    schema: { summary: "Deletes one of a user's SSH keys (administrators)", tags },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { user_id, key_id } = input;
    const owner = await userOr404(db, user_id);
    await removeKey(request, owner, key_id);
    return reply.code(204).send();
  });
};

export default userKeys;
