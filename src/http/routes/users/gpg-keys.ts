/**
 * Users' GPG keys (spec, GPG keys; reference §2.2): the current user's under /user/gpg_keys, any
 * user's read without authentication under /users/:id/gpg_keys, and administrators' writes.
 * Revoking answers 202 and removes the key (signatures made with it would no longer verify).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import { createGpgKey } from '../../../domain/gpg-keys/create-gpg-key.ts';
import { deleteGpgKey, findUserGpgKey, userGpgKeysQuery } from '../../../domain/gpg-keys/gpg-keys.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, validationFailed } from '../../errors.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { defineParams, P } from '../../input/params.ts';
import { GpgKeySchema, presentGpgKey } from '../../entities/gpg-key.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { route } from '../../route.ts';

const userId = P.integer({ description: 'user id' });
const keyId = P.integer({ description: 'GPG key id' });
const armoredKey = P.string({ description: 'the armored public key block' });

const params = {
  list: defineParams({ ...paginationParams }),
  one: defineParams({ key_id: keyId }),
  create: defineParams({ key: armoredKey }),
  listOf: defineParams({ id: userId, ...paginationParams }),
  oneOf: defineParams({ id: userId, key_id: keyId }),
  createFor: defineParams({ id: userId, key: armoredKey }),
};

const tags = ['gpg_keys'];
const GpgKeyList = Type.Array(GpgKeySchema);
const Accepted = Type.Object({ message: Type.String() });

const userGpgKeys: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function keyOr404(owner: UserRow, id: number) {
    const key = await findUserGpgKey(db, owner.id, id);
    if (!key) throw notFound('GPG Key');
    return key;
  }

  async function addKey(owner: UserRow, key: string) {
    const result = await createGpgKey(db, owner.id, key);
    if (!result.ok) throw validationFailed(result.errors);
    return presentGpgKey(result.value);
  }

  async function removeKey(request: FastifyRequest, reply: FastifyReply, owner: UserRow, id: number) {
    const key = await keyOr404(owner, id);
    checkUnmodifiedSince(request, key.updated_at);
    await deleteGpgKey(db, key.id);
    return reply.code(204).send();
  }

  // Revocation removes the key, as the Service's GpgKey#revoke destroys it (reference §2.2, §11).
  async function revokeKey(reply: FastifyReply, owner: UserRow, id: number) {
    const key = await keyOr404(owner, id);
    await deleteGpgKey(db, key.id);
    return reply.code(202).send({ message: '202 Accepted' });
  }

  route(app, {
    method: 'GET', url: '/user/gpg_keys', auth: 'required', scopes: ['read_user'], params: params.list,
    schema: { summary: "The current user's GPG keys", tags, response: { 200: GpgKeyList } },
  }, async ({ request, reply, caller }) => {
    const rows = await paginate(db, request, reply, userGpgKeysQuery(db, caller.user.id));
    return rows.map(presentGpgKey);
  });

  route(app, {
    method: 'GET', url: '/user/gpg_keys/:key_id', auth: 'required', scopes: ['read_user'], params: params.one,
    schema: { summary: "One of the current user's GPG keys", tags, response: { 200: GpgKeySchema } },
  }, async ({ input, caller }) => {
    const { key_id } = input;
    return presentGpgKey(await keyOr404(caller.user, key_id));
  });

  route(app, {
    method: 'POST', url: '/user/gpg_keys', auth: 'required', params: params.create,
    schema: { summary: 'Adds a GPG key to the current user', tags, response: { 201: GpgKeySchema } },
  }, async ({ reply, input, caller }) => {
    const { key } = input;
    reply.code(201);
    return addKey(caller.user, key);
  });

  route(app, {
    method: 'POST', url: '/user/gpg_keys/:key_id/revoke', auth: 'required', params: params.one,
    schema: { summary: "Revokes one of the current user's GPG keys", tags, response: { 202: Accepted } },
  }, async ({ reply, input, caller }) => {
    const { key_id } = input;
    return revokeKey(reply, caller.user, key_id);
  });

  route(app, {
    method: 'DELETE', url: '/user/gpg_keys/:key_id', auth: 'required', params: params.one,
    schema: { summary: "Deletes one of the current user's GPG keys", tags },
  }, async ({ request, reply, input, caller }) => {
    const { key_id } = input;
    return removeKey(request, reply, caller.user, key_id);
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/gpg_keys', auth: 'optional', scopes: ['read_user'], params: params.listOf,
    schema: { summary: "A user's GPG keys (no authentication needed)", tags, response: { 200: GpgKeyList } },
  }, async ({ request, reply, input }) => {
    const { id } = input;
    const owner = await userOr404(db, id);
    const rows = await paginate(db, request, reply, userGpgKeysQuery(db, owner.id));
    return rows.map(presentGpgKey);
  });

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/gpg_keys/:key_id', auth: 'optional', scopes: ['read_user'], params: params.oneOf,
    schema: { summary: "One of a user's GPG keys (no authentication needed)", tags, response: { 200: GpgKeySchema } },
  }, async ({ input }) => {
    const { id, key_id } = input;
    return presentGpgKey(await keyOr404(await userOr404(db, id), key_id));
  });

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/gpg_keys', auth: 'required', params: params.createFor,
    schema: { summary: 'Adds a GPG key to a user (administrators)', tags, response: { 201: GpgKeySchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { id, key } = input;
    const owner = await userOr404(db, id);
    reply.code(201);
    return addKey(owner, key);
  });

  route(app, {
    method: 'POST', url: '/users/:id(^\\d+$)/gpg_keys/:key_id/revoke', auth: 'required', params: params.oneOf,
    schema: { summary: "Revokes one of a user's GPG keys (administrators)", tags, response: { 202: Accepted } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { id, key_id } = input;
    return revokeKey(reply, await userOr404(db, id), key_id);
  });

  route(app, {
    method: 'DELETE', url: '/users/:id(^\\d+$)/gpg_keys/:key_id', auth: 'required', params: params.oneOf,
    schema: { summary: "Deletes one of a user's GPG keys (administrators)", tags },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const { id, key_id } = input;
    return removeKey(request, reply, await userOr404(db, id), key_id);
  });
};

export default userGpgKeys;
