/**
 * The users resource (spec, Users). GET /user and GET /users/:id; the rest of the resource
 * arrives with the users area.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { customAttributesOf, findUserProfile, identitiesOf, personalNamespaceId, type UserProfileRow } from '../../domain/users/users.queries.ts';
import { notFound } from '../errors.ts';
import { defineParams, P } from '../params.ts';
import {
  presentUser, presentUserDetailsWithAdmin, presentUserPublic, presentUserWithAdmin,
  UserDetailsWithAdminSchema, UserPublicSchema, UserSchema, UserWithAdminSchema, type UserExtras,
} from '../entities/user.ts';
import { Type } from 'typebox';
import { compileSerializer, serializeWith } from '../entities/serializers.ts';

const serialize = {
  User: compileSerializer(UserSchema),
  UserPublic: compileSerializer(UserPublicSchema),
  UserWithAdmin: compileSerializer(UserWithAdminSchema),
  UserDetailsWithAdmin: compileSerializer(UserDetailsWithAdminSchema),
};

const showUserParams = defineParams({
  id: P.integer({ description: 'user id' }),
  with_custom_attributes: P.optional(P.boolean({ default: false, description: 'include custom attributes (administrators)' })),
});

/** Identities and the personal namespace: the fields only administrators (or the user) see. */
async function privateExtras(db: Kysely<DB>, user: UserRow): Promise<UserExtras> {
  const [identities, namespaceId] = await Promise.all([identitiesOf(db, [user.id]), personalNamespaceId(db, user.id)]);
  return { identities, namespaceId };
}

function profileExtras(row: UserProfileRow, viewer: UserRow | null): UserExtras {
  return {
    followers: row.followers,
    following: row.following,
    ...(viewer ? { isFollowed: row.is_followed > 0 } : {}),
  };
}

const users: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  app.get('/user', {
    config: { auth: 'required', scopes: ['read_user'] },
    schema: {
      summary: 'The current user (UserWithAdmin for administrators, UserPublic otherwise)',
      tags: ['users'],
      response: { 200: Type.Union([UserWithAdminSchema, UserPublicSchema]) },
    },
  }, async (request, reply) => {
    const viewer = request.caller!.user;
    const row = await findUserProfile(db, viewer.id, viewer.id);
    if (!row) throw notFound('User');
    const extras = { ...profileExtras(row, viewer), ...(await privateExtras(db, row)) };
    const o = { externalUrl, canReadProfile: true };
    if (viewer.admin) {
      serializeWith(reply, serialize.UserWithAdmin);
      return presentUserWithAdmin(row, extras, o);
    }
    serializeWith(reply, serialize.UserPublic);
    return presentUserPublic(row, extras, o);
  });

  app.get('/users/:id(^\\d+$)', {
    config: { auth: 'optional', scopes: ['read_user'], params: showUserParams },
    schema: {
      summary: 'A single user (UserDetailsWithAdmin for administrators, User otherwise)',
      tags: ['users'],
      response: { 200: Type.Union([UserDetailsWithAdminSchema, UserSchema]) },
    },
  }, async (request, reply) => {
    const input = request.input as { id: number; with_custom_attributes: boolean };
    const viewer = request.caller?.user ?? null;
    const row = await findUserProfile(db, input.id, viewer?.id ?? null);
    if (!row) throw notFound('User');
    const admin = viewer?.admin === 1;
    const extras = profileExtras(row, viewer);
    const o = { externalUrl, canReadProfile: row.private_profile === 0 || admin || viewer?.id === row.id };
    if (!admin) {
      serializeWith(reply, serialize.User);
      return presentUser(row, extras, o);
    }
    serializeWith(reply, serialize.UserDetailsWithAdmin);
    const details = { ...extras, ...(await privateExtras(db, row)) };
    if (input.with_custom_attributes) details.customAttributes = (await customAttributesOf(db, [row.id])).map(({ key, value }) => ({ key, value }));
    return presentUserDetailsWithAdmin(row, details, o);
  });
};

export default users;
