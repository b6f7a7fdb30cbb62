/**
 * Account writes of the users resource (spec, Users): POST /users, PUT /users/:id and
 * DELETE /users/:id/identities/:provider, administrators only. Parameters are validated before
 * the administrator check, as the Service does (reference §0.2, §6.4).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB, UserRow } from '../../../db/types.ts';
import { createUser, type CreateUserInput, type UserWriteFailure } from '../../../domain/users/create-user.ts';
import { updateUser } from '../../../domain/users/update-user.ts';
import { deleteIdentity, findIdentity, identitiesOfUser, personalNamespaceId } from '../../../domain/users/users.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { presentUserWithAdmin, UserWithAdminSchema } from '../../entities/user.ts';
import { conflict, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import { userOr404 } from '../../user-lookup.ts';
import { audit } from '../../audit.ts';
import { route } from '../../route.ts';

/** UserDetail::DEFAULT_FIELD_LENGTH: the profile's links, location and organization. */
const PROFILE_FIELD_MAX = 500;

/** The optional attributes POST and PUT share (reference §1.6). */
const accountAttributes = {
  skype: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'Skype id' })),
  linkedin: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'LinkedIn' })),
  twitter: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'Twitter account' })),
  discord: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'Discord user id' })),
  website_url: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'website URL' })),
  organization: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'organization name' })),
  job_title: P.optional(P.string({ description: 'job title' })),
  projects_limit: P.optional(P.integer({ description: 'number of projects the user may create' })),
  extern_uid: P.optional(P.name({ description: 'external uid (with provider)' })),
  provider: P.optional(P.name({ description: 'external provider name (with extern_uid)' })),
  bio: P.optional(P.string({ description: 'biography' })),
  location: P.optional(P.string({ maxLength: PROFILE_FIELD_MAX, description: 'location' })),
  pronouns: P.optional(P.string({ description: 'pronouns' })),
  public_email: P.optional(P.name({ description: 'public email, one of the user\'s verified emails' })),
  commit_email: P.optional(P.name({ description: 'commit email, one of the user\'s verified emails' })),
  admin: P.optional(P.boolean({ description: 'administrator' })),
  can_create_group: P.optional(P.boolean({ description: 'may create top-level groups' })),
  external: P.optional(P.boolean({ description: 'external user' })),
  avatar: P.optional(P.file({ description: 'avatar image (multipart)' })),
  theme_id: P.optional(P.integer({ description: 'theme' })),
  color_scheme_id: P.optional(P.integer({ description: 'color scheme' })),
  private_profile: P.optional(P.boolean({ description: 'private profile' })),
  note: P.optional(P.string({ description: 'administrator note' })),
  view_diffs_file_by_file: P.optional(P.boolean({ description: 'show one file per page in diffs' })),
};

const createParams = defineParams({
  email: P.name({ description: 'email' }),
  name: P.string({ description: 'name' }),
  username: P.string({ description: 'username' }),
  password: P.optional(P.string({ description: 'password' })),
  reset_password: P.optional(P.boolean({ description: 'send a password reset link instead of setting a password' })),
  force_random_password: P.optional(P.boolean({ description: 'set a random password' })),
  skip_confirmation: P.optional(P.boolean({ description: 'mark the email confirmed' })),
  ...accountAttributes,
}, {
  atLeastOneOf: [['password', 'reset_password', 'force_random_password']],
  allOrNoneOf: [['extern_uid', 'provider']],
});

const updateParams = defineParams({
  id: P.integer({ description: 'user id' }),
  email: P.optional(P.name({ description: 'email' })),
  name: P.optional(P.string({ description: 'name' })),
  username: P.optional(P.string({ description: 'username' })),
  password: P.optional(P.string({ description: 'password (expired at once when set for someone else)' })),
  skip_reconfirmation: P.optional(P.boolean({ description: 'keep the new email confirmed' })),
  ...accountAttributes,
}, { allOrNoneOf: [['extern_uid', 'provider']] });

const deleteIdentityParams = defineParams({
  id: P.integer({ description: 'user id' }),
  provider: P.name({ description: 'identity provider' }),
});

function failure(result: UserWriteFailure): Error {
  switch (result.reason) {
    case 'email_taken': return conflict('Email has already been taken');
    case 'username_taken': return conflict('Username has already been taken');
    case 'invalid': return validationFailed(result.errors);
  }
}

/** The UserWithAdmin entity of one user, as POST and PUT answer. */
async function adminView(db: Kysely<DB>, user: UserRow, externalUrl: string) {
  const [identities, namespaceId] = await Promise.all([identitiesOfUser(db, user.id), personalNamespaceId(db, user.id)]);
  return presentUserWithAdmin(
    user,
    { identities, namespaceId, followers: 0, following: 0, isFollowed: false },
    { externalUrl, canReadProfile: true },
  );
}

const userAccounts: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/users', auth: 'required', params: createParams,
    schema: { summary: 'Create a user (administrators)', tags: ['users'], response: { 201: UserWithAdminSchema } },
  }, async ({ request, reply, input }) => {
    const admin = authenticatedAsAdmin(request);
    const result = await createUser(db, input as CreateUserInput, { createdById: admin.id, dataDir: config.dataDir });
    if (!result.ok) throw failure(result);
    const created = result.value;
    await audit(request, {
      entityType: 'User',
      entityId: created.id,
      entityPath: created.username,
      target: { id: created.id, type: 'User', details: created.username },
      message: `User ${created.username} created`,
    });
    reply.code(201);
    return adminView(db, created, config.externalUrl);
  });

  route(app, {
    method: 'PUT', url: '/users/:id(^\\d+$)', auth: 'required', params: updateParams,
    schema: { summary: 'Modify a user (administrators)', tags: ['users'], response: { 200: UserWithAdminSchema } },
  }, async ({ request, input }) => {
    const admin = authenticatedAsAdmin(request);
    const { id, ...changes } = input;
    const user = await userOr404(db, id);
    const result = await updateUser(db, user, changes, { actorId: admin.id, dataDir: config.dataDir });
    if (!result.ok) throw failure(result);
    return adminView(db, result.value, config.externalUrl);
  });

  route(app, {
    method: 'DELETE', url: '/users/:id(^\\d+$)/identities/:provider', auth: 'required', params: deleteIdentityParams,
    schema: { summary: "Delete a user's identity (administrators)", tags: ['users'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const user = await userOr404(db, input.id);
    const identity = await findIdentity(db, user.id, input.provider);
    if (!identity) throw notFound('Identity');
    checkUnmodifiedSince(request, identity.created_at);
    await deleteIdentity(db, identity.id);
    return reply.code(204).send();
  });
};

export default userAccounts;
