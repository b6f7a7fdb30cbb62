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

  app.get('/user/gpg_keys', {
    config: { auth: 'required', scopes: ['read_user'], params: params.list },
    schema: { summary: "The current user's GPG keys", tags, response: { 200: GpgKeyList } },
  }, async (request, reply) => {
    const rows = await paginate(db, request, reply, userGpgKeysQuery(db, request.caller!.user.id));
    return rows.map(presentGpgKey);
  });

  app.get('/user/gpg_keys/:key_id', {
    config: { auth: 'required', scopes: ['read_user'], params: params.one },
    schema: { summary: "One of the current user's GPG keys", tags, response: { 200: GpgKeySchema } },
  }, async (request) => {
    const { key_id } = request.input as { key_id: number };
    return presentGpgKey(await keyOr404(request.caller!.user, key_id));
  });

  app.post('/user/gpg_keys', {
    config: { auth: 'required', params: params.create },
    schema: { summary: 'Adds a GPG key to the current user', tags, response: { 201: GpgKeySchema } },
  }, async (request, reply) => {
    const { key } = request.input as { key: string };
    reply.code(201);
    return addKey(request.caller!.user, key);
  });

  app.post('/user/gpg_keys/:key_id/revoke', {
    config: { auth: 'required', params: params.one },
    schema: { summary: "Revokes one of the current user's GPG keys", tags, response: { 202: Accepted } },
  }, async (request, reply) => {
    const { key_id } = request.input as { key_id: number };
    return revokeKey(reply, request.caller!.user, key_id);
  });

  app.delete('/user/gpg_keys/:key_id', {
    config: { auth: 'required', params: params.one },
    schema: { summary: "Deletes one of the current user's GPG keys", tags },
  }, async (request, reply) => {
    const { key_id } = request.input as { key_id: number };
    return removeKey(request, reply, request.caller!.user, key_id);
  });

  app.get('/users/:id(^\\d+$)/gpg_keys', {
    config: { auth: 'optional', scopes: ['read_user'], params: params.listOf },
    schema: { summary: "A user's GPG keys (no authentication needed)", tags, response: { 200: GpgKeyList } },
  }, async (request, reply) => {
    const { id } = request.input as { id: number };
    const owner = await userOr404(db, id);
    const rows = await paginate(db, request, reply, userGpgKeysQuery(db, owner.id));
    return rows.map(presentGpgKey);
  });

  app.get('/users/:id(^\\d+$)/gpg_keys/:key_id', {
    config: { auth: 'optional', scopes: ['read_user'], params: params.oneOf },
    schema: { summary: "One of a user's GPG keys (no authentication needed)", tags, response: { 200: GpgKeySchema } },
  }, async (request) => {
    const { id, key_id } = request.input as { id: number; key_id: number };
    return presentGpgKey(await keyOr404(await userOr404(db, id), key_id));
  });

  app.post('/users/:id(^\\d+$)/gpg_keys', {
    config: { auth: 'required', params: params.createFor },
    schema: { summary: 'Adds a GPG key to a user (administrators)', tags, response: { 201: GpgKeySchema } },
  }, async (request, reply) => {
    authenticatedAsAdmin(request);
    const { id, key } = request.input as { id: number; key: string };
    const owner = await userOr404(db, id);
    reply.code(201);
    return addKey(owner, key);
  });

  app.post('/users/:id(^\\d+$)/gpg_keys/:key_id/revoke', {
    config: { auth: 'required', params: params.oneOf },
    schema: { summary: "Revokes one of a user's GPG keys (administrators)", tags, response: { 202: Accepted } },
  }, async (request, reply) => {
    authenticatedAsAdmin(request);
    const { id, key_id } = request.input as { id: number; key_id: number };
    return revokeKey(reply, await userOr404(db, id), key_id);
  });

  app.delete('/users/:id(^\\d+$)/gpg_keys/:key_id', {
    config: { auth: 'required', params: params.oneOf },
    schema: { summary: "Deletes one of a user's GPG keys (administrators)", tags },
  }, async (request, reply) => {
    authenticatedAsAdmin(request);
    const { id, key_id } = request.input as { id: number; key_id: number };
    return removeKey(request, reply, await userOr404(db, id), key_id);
  });
};

export default userGpgKeys;
