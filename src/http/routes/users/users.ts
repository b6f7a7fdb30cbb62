/**
 * The users resource, reads (spec, Users): GET /users, GET /users/:id, GET /user. Writes live in
 * user-accounts.ts, state operations in user-admin-actions.ts.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { DB, UserRow } from '../../../db/types.ts';
import {
  customAttributesOf, findUserProfile, userProfileNow, identitiesOfUser, listedIdentities, personalNamespaceId, selectUserListExtras,
  type UserListExtrasRow, type UserProfileRow,
} from '../../../domain/users/users.queries.ts';
import { usersShape, type UsersFrom, type UsersOrderBy } from '../../../domain/users/users.finder.ts';
import { highestRoleOf } from '../../../domain/members/members.queries.ts';
import { forbidden, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginationParams, ShapedList } from '../../lists/pagination.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import {
  presentUser, presentUserBasic, presentUserDetailsWithAdmin, presentUserPublic, presentUserWithAdmin,
  UserBasicSchema, UserDetailsWithAdminSchema, UserPublicSchema, UserSchema, UserWithAdminSchema, USER_BASIC_COLUMNS,
  USER_ENTITY_COLUMNS, type UserExtras,
} from '../../entities/user.ts';
import { Type } from 'typebox';
import { compileSerializer, exactJson, serializeWith } from '../../entities/serializers.ts';
import { checkSearchRateLimit } from '../../search-rate-limit.ts';
import { RememberedPages } from '../../lists/remembered-pages.ts';
import { route } from '../../route.ts';

const serialize = {
  UserBasicList: compileSerializer(exactJson(Type.Array(UserBasicSchema))),
  UserWithAdminList: compileSerializer(exactJson(Type.Array(UserWithAdminSchema))),
  // JSON.stringify for a single user too: it keeps the presenters' Service order (reference
  // §1.3), where the schema's serialiser writes optional fields last.
  User: compileSerializer(exactJson(UserSchema)),
  UserPublic: compileSerializer(exactJson(UserPublicSchema)),
  UserWithAdmin: compileSerializer(exactJson(UserWithAdminSchema)),
  UserDetailsWithAdmin: compileSerializer(exactJson(UserDetailsWithAdminSchema)),
};

const showUserParams = defineParams({
  id: P.integer({ description: 'user id' }),
  with_custom_attributes: P.optional(P.boolean({ default: false, description: 'include custom attributes (administrators)' })),
});

const listUsersParams = defineParams({
  ...paginationParams,
  username: P.optional(P.string({ description: 'exact username, without regard to case' })),
  extern_uid: P.optional(P.string({ description: 'external uid of an identity (administrators, with provider)' })),
  provider: P.optional(P.string({ description: 'identity provider (administrators, with extern_uid)' })),
  search: P.optional(P.string({ description: 'part of the name or username, or the exact public email' })),
  active: P.optional(P.boolean({ description: 'only active users' })),
  external: P.optional(P.boolean({ description: 'only external users' })),
  exclude_external: P.optional(P.boolean({ description: 'leave out external users' })),
  blocked: P.optional(P.boolean({ description: 'only blocked users' })),
  exclude_internal: P.optional(P.boolean({ description: 'leave out internal users (ghost, bots)' })),
  without_project_bots: P.optional(P.boolean({ description: 'leave out project bots' })),
  created_after: P.optional(P.dateTime({ description: 'created after (administrators)' })),
  created_before: P.optional(P.dateTime({ description: 'created before (administrators)' })),
  order_by: P.optional(P.oneOf(
    ['id', 'name', 'username', 'created_at', 'updated_at'] as const,
    { default: 'id', description: 'order (administrators)' },
  )),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc', description: 'direction (administrators)' })),
  two_factor: P.optional(P.string({ description: 'enabled or disabled (administrators)' })),
  without_projects: P.optional(P.boolean({ description: 'only users without projects (administrators)' })),
  admins: P.optional(P.boolean({ description: 'only administrators (administrators)' })),
  saml_provider_id: P.optional(P.integer({ description: 'users with an identity of this SAML provider (administrators)' })),
  custom_attributes: P.optional(P.hash({ description: 'custom_attributes[key]=value filters (administrators)' })),
  with_custom_attributes: P.optional(P.boolean({ default: false, description: 'include custom attributes (administrators)' })),
}, { allOrNoneOf: [['extern_uid', 'provider']] });

/** Identities and the personal namespace: the fields only administrators (or the user) see. */
async function privateExtras(db: Kysely<DB>, user: UserRow): Promise<UserExtras> {
  const [identities, namespaceId] = await Promise.all([identitiesOfUser(db, user.id), personalNamespaceId(db, user.id)]);
  return { identities, namespaceId };
}

function profileExtras(row: UserProfileRow, viewer: UserRow | null): UserExtras {
  return {
    followers: row.followers,
    following: row.following,
    ...(viewer ? { isFollowed: row.is_followed > 0 } : {}),
  };
}

/**
 * GET /user: UserWithAdmin for administrators, UserPublic otherwise. Exported because the
 * Service still serves it under /api/v3 too, for OAuth clients (reference §11).
 */
export function currentUserRoute(app: FastifyInstance, documented = true): void {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;
  route(app, {
    method: 'GET', url: '/user', auth: 'required', scopes: ['read_user'],
    // /api/v3/user is left out of the OpenAPI document (and answers without a response schema).
    schema: documented ? {
      summary: 'The current user (UserWithAdmin for administrators, UserPublic otherwise)',
      tags: ['users'],
      response: { 200: Type.Union([UserWithAdminSchema, UserPublicSchema]) },
    } : { hide: true },
  }, async ({ reply, caller }) => {
      const viewer = caller.user;
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
}

/** GET /users for non-administrators: UserBasic needs five columns. */
const basicUsersList = new ShapedList('users:basic', {
  from: (db) => db.selectFrom('users'),
  select: (qb: UsersFrom) => qb.select(USER_BASIC_COLUMNS),
  id: 'users.id',
});

/** GET /users for administrators: UserWithAdmin's columns, and the extras the route's shape step adds. */
const usersWithAdminList = new ShapedList('users:admin', {
  from: (db) => db.selectFrom('users'),
  select: (qb: UsersFrom) => (qb as SelectQueryBuilder<DB, 'users', UserListExtrasRow>)
    .select(USER_ENTITY_COLUMNS.map((c) => `users.${c}` as const)),
  id: 'users.id',
});

const users: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;
  const usersPages = new RememberedPages('users');

  route(app, {
    method: 'GET', url: '/users', auth: 'optional', scopes: ['read_user'], params: listUsersParams,
    schema: {
    summary: 'Users (UserWithAdmin for administrators, UserBasic otherwise)',
    tags: ['users'],
    response: { 200: Type.Union([Type.Array(UserWithAdminSchema), Type.Array(UserBasicSchema)]) },
    },
  }, async ({ request, reply, input, caller }) => {
    const viewer = caller?.user ?? null;
    if (input.extern_uid !== undefined && input.provider !== undefined) authenticatedAsAdmin(request);
    // Only an exact username lookup (0 or 1 users) is open to anonymous callers (reference §1.4, §11).
    if (!viewer && input.username === undefined) throw forbidden('Not authorized to access /api/v4/users');
    // Searching users counts against the search rate limit (application settings, formerly user_email_lookup_limit).
    if (input.search !== undefined && input.search !== null) await checkSearchRateLimit(request);
    const admin = viewer?.admin === 1;
    // Administrator-only parameters are silently dropped for everyone else; they get id DESC.
    const shape = usersShape({
      admin,
      search: input.search, username: input.username, active: input.active === true, blocked: input.blocked === true,
      external: input.external === true, excludeInternal: input.exclude_internal === true,
      excludeExternal: input.exclude_external === true, withoutProjectBots: input.without_project_bots === true,
      externUid: input.extern_uid, provider: input.provider,
      ...(admin ? {
        createdBefore: input.created_before, createdAfter: input.created_after, customAttributes: input.custom_attributes ?? undefined,
        twoFactor: input.two_factor, withoutProjects: input.without_projects === true, admins: input.admins === true,
        samlProviderId: input.saml_provider_id ?? undefined,
        orderBy: (input.order_by ?? 'id') as UsersOrderBy, sort: input.sort ?? 'desc',
      } : { orderBy: 'id', sort: 'desc' }),
    });
    const remembered = usersPages.answer(request, reply);
    if (remembered !== undefined) return remembered;
    const o = { externalUrl, canReadProfile: true };
    if (!admin) {
      const basicRows = await basicUsersList.paginate(db, request, reply, shape);
      return usersPages.send(request, reply, basicRows.map((row) => presentUserBasic(row, {}, o)), serialize.UserBasicList);
    }
    // Follow counts, namespace and identities come with the rows (selectUserListExtras).
    const viewerId = shape.arg(viewer.id);
    shape.select('extras', (qb) => selectUserListExtras(db, qb, viewerId));
    const rows = await usersWithAdminList.paginate(db, request, reply, shape);
    const attributes = input.with_custom_attributes ? await customAttributesOf(db, rows.map((r) => r.id)) : null;
    return usersPages.send(request, reply, rows.map((row) => presentUserWithAdmin(row, {
      followers: Number(row.followers), following: Number(row.following), isFollowed: Number(row.is_followed) > 0,
      identities: listedIdentities(row.identities),
      namespaceId: row.namespace_id ?? null,
      ...(attributes ? { customAttributes: attributes.filter((a) => a.user_id === row.id).map(({ key, value }) => ({ key, value })) } : {}),
    }, o)), serialize.UserWithAdminList);
  });

  currentUserRoute(app);

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)', auth: 'optional', scopes: ['read_user'], params: showUserParams,
    schema: {
    summary: 'A single user (UserDetailsWithAdmin for administrators, User otherwise)',
    tags: ['users'],
    response: { 200: Type.Union([UserDetailsWithAdminSchema, UserSchema]) },
    },
  }, ({ reply, input, caller }) => {
    const viewer = caller?.user ?? null;
    const admin = viewer?.admin === 1;
    const found = userProfileNow(db, input.id, viewer?.id ?? null);
    // The hottest read of the API: a remembered row for a non-administrator is answered without
    // waiting on a single promise (Fastify sends a handler's plain return value directly).
    if (!admin && !(found instanceof Promise)) return showUser(reply, found, viewer);
    return (async () => {
      const row = await found;
      if (!admin) return showUser(reply, row, viewer);
      if (!row) throw notFound('User');
      serializeWith(reply, serialize.UserDetailsWithAdmin);
      const [privateFields, highestRole] = await Promise.all([privateExtras(db, row), highestRoleOf(db, row.id)]);
      const details: UserExtras = { ...profileExtras(row, viewer), ...privateFields, highestRole };
      if (input.with_custom_attributes) {
        details.customAttributes = (await customAttributesOf(db, [row.id])).map(({ key, value }) => ({ key, value }));
      }
      return presentUserDetailsWithAdmin(row, details, { externalUrl, canReadProfile: true });
    })();
  });

  /** The User entity, as a non-administrator sees it. */
  function showUser(reply: FastifyReply, row: UserProfileRow | undefined, viewer: UserRow | null) {
    if (!row) throw notFound('User');
    serializeWith(reply, serialize.User);
    return presentUser(row, profileExtras(row, viewer), {
      externalUrl,
      canReadProfile: row.private_profile === 0 || viewer?.id === row.id,
    });
  }
};

export default users;
