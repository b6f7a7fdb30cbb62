/**
 * Users (the Service's `UserCore` behind the `User` interface): `currentUser`, `user(id|username)`,
 * `users(ids, usernames, sort, search, admins)`, with status, emails, namespace and memberships.
 * Who sees what follows REST: emails and memberships to the user and administrators only.
 */
import type { UserRow } from '../../db/types.ts';
import type { MemberRow } from '../../db/tables/projects.ts';
import { findUsers } from '../../domain/users/users.finder.ts';
import { restrictUsers } from '../../domain/users/users-batch.queries.ts';
import { findUserById, findUserByUsername } from '../../domain/users/users.queries.ts';
import { isBot } from '../../domain/users/user-kind.ts';
import { renderEmojiHtml } from '../../domain/user-status/emoji.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { canOnGroup } from '../../domain/permissions/group.policy.ts';
import { MODELS, parseGid, toGid, type ParsedGid } from '../global-id.ts';
import { connectionFromArray, connectionFromQuery, type ConnectionArgs } from '../connection.ts';
import { isSelfOrAdmin, projectById, resourceNotAvailable } from '../access.ts';
import type { GqlContext, NamespaceInfo } from '../context.ts';
import { GraphQLError } from 'graphql';
import { boundedText, optionalText } from '../bounds.ts';

export const typeDefs = /* GraphQL */ `
  enum UserState { active blocked deactivated }
  enum AvailabilityEnum { NOT_SET BUSY }
  enum AccessLevelEnum { NO_ACCESS MINIMAL_ACCESS GUEST REPORTER DEVELOPER MAINTAINER OWNER }

  interface User {
    id: ID!
    username: String!
    name: String!
    state: UserState!
    webUrl: String!
    webPath: String!
    avatarUrl: String
    publicEmail: String
    location: String
    bot: Boolean!
    status: UserStatus
    emails(after: String, before: String, first: Int, last: Int): EmailConnection
    namespace: Namespace
    groupCount: Int
    groupMemberships(after: String, before: String, first: Int, last: Int): GroupMemberConnection
    projectMemberships(after: String, before: String, first: Int, last: Int): ProjectMemberConnection
  }

  type UserCore implements User {
    id: ID!
    username: String!
    name: String!
    state: UserState!
    webUrl: String!
    webPath: String!
    avatarUrl: String
    publicEmail: String
    location: String
    bot: Boolean!
    status: UserStatus
    emails(after: String, before: String, first: Int, last: Int): EmailConnection
    namespace: Namespace
    groupCount: Int
    groupMemberships(after: String, before: String, first: Int, last: Int): GroupMemberConnection
    projectMemberships(after: String, before: String, first: Int, last: Int): ProjectMemberConnection
  }

  type UserCoreEdge { cursor: String! node: UserCore }
  type UserCoreConnection { edges: [UserCoreEdge] nodes: [UserCore] pageInfo: PageInfo! count: Int! }

  type UserStatus {
    availability: AvailabilityEnum!
    emoji: String
    message: String
    messageHtml: String
  }

  type Email {
    id: ID!
    email: String!
    confirmedAt: Time
    createdAt: Time!
    updatedAt: Time!
  }
  type EmailEdge { cursor: String! node: Email }
  type EmailConnection { edges: [EmailEdge] nodes: [Email] pageInfo: PageInfo! }

  type Namespace {
    id: ID!
    name: String!
    path: String!
    fullName: String!
    fullPath: ID!
    description: String
    visibility: String
  }

  type AccessLevel {
    integerValue: Int
    stringValue: AccessLevelEnum
  }

  interface MemberInterface {
    id: ID!
    accessLevel: AccessLevel
    createdAt: Time
    updatedAt: Time
    expiresAt: Time
    user: UserCore
  }

  type GroupMember implements MemberInterface {
    id: ID!
    accessLevel: AccessLevel
    createdAt: Time
    updatedAt: Time
    expiresAt: Time
    user: UserCore
    group: Group
  }
  type GroupMemberEdge { cursor: String! node: GroupMember }
  type GroupMemberConnection { edges: [GroupMemberEdge] nodes: [GroupMember] pageInfo: PageInfo! }

  type ProjectMember implements MemberInterface {
    id: ID!
    accessLevel: AccessLevel
    createdAt: Time
    updatedAt: Time
    expiresAt: Time
    user: UserCore
    project: Project
  }
  type ProjectMemberEdge { cursor: String! node: ProjectMember }
  type ProjectMemberConnection { edges: [ProjectMemberEdge] nodes: [ProjectMember] pageInfo: PageInfo! }

  extend type Query {
    "Get information about current user."
    currentUser: UserCore
    "Find a user."
    user(id: UserID, username: String): UserCore
    "Find users."
    users(ids: [ID!], usernames: [String!], sort: Sort = created_desc, search: String, admins: Boolean = false,
      after: String, before: String, first: Int, last: Int): UserCoreConnection
  }
`;

const USER_STATES: Record<string, string> = { active: 'active', deactivated: 'deactivated' };
const ACCESS_NAMES: Record<number, string> = {
  0: 'NO_ACCESS', 5: 'MINIMAL_ACCESS', 10: 'GUEST', 20: 'REPORTER', 30: 'DEVELOPER', 40: 'MAINTAINER',
  50: 'OWNER',
};
/** The Service caps `ids` and `usernames` lists the way it caps pages. */
const MAX_LIST = 100;

export function presentNamespace(info: NamespaceInfo) {
  const ns = info.namespace;
  return {
    id: toGid(ns.kind === 'group' ? MODELS.group : MODELS.userNamespace, ns.id),
    name: ns.name, path: ns.path, fullName: info.fullName, fullPath: info.fullPath,
    description: ns.description, visibility: visibilityName(ns.visibility_level),
  };
}

const accessLevel = (m: MemberRow) => ({ integerValue: m.access_level, stringValue: ACCESS_NAMES[m.access_level] ?? null });

const memberFields = {
  accessLevel,
  createdAt: (m: MemberRow) => m.created_at,
  updatedAt: (m: MemberRow) => m.updated_at,
  expiresAt: (m: MemberRow) => m.expires_at,
  user: (m: MemberRow, _: unknown, ctx: GqlContext) => ctx.loaders.users.load(m.user_id),
};

const userFields = {
  id: (u: UserRow) => toGid(MODELS.user, u.id),
  state: (u: UserRow) => USER_STATES[u.state] ?? 'blocked',
  webUrl: (u: UserRow, _: unknown, ctx: GqlContext) => `${ctx.kiln.config.externalUrl}/${u.username}`,
  webPath: (u: UserRow) => `/${u.username}`,
  avatarUrl: (u: UserRow, _: unknown, ctx: GqlContext) =>
    (u.avatar ? `${ctx.kiln.config.externalUrl}/uploads/-/system/user/avatar/${u.id}/${encodeURIComponent(u.avatar)}` : null),
  publicEmail: (u: UserRow) => u.public_email || null,
  location: (u: UserRow) => u.location,
  bot: (u: UserRow) => isBot(u),
  status: async (u: UserRow, _: unknown, ctx: GqlContext) => {
    const s = await ctx.loaders.statuses.load(u.id);
    if (!s) return null;
    return {
      availability: s.availability === 'busy' ? 'BUSY' : 'NOT_SET',
      emoji: s.emoji,
      message: s.message,
      messageHtml: s.message && s.message.trim() !== '' ? renderEmojiHtml(s.message) : null,
    };
  },
  emails: async (u: UserRow, args: ConnectionArgs, ctx: GqlContext) => {
    if (!isSelfOrAdmin(ctx, u.id)) return null;
    const rows = await ctx.loaders.emails.load(u.id);
    return connectionFromArray(rows.map((e) => ({
      id: e.id, gid: toGid(
        MODELS.email, e.id,
      ), email: e.email, confirmedAt: e.confirmed_at, createdAt: e.created_at, updatedAt: e.updated_at,
    })), args, 'asc');
  },
  namespace: async (u: UserRow, _: unknown, ctx: GqlContext) => {
    const nsId = await ctx.loaders.personalNamespaceIds.load(u.id);
    const info = nsId === null ? null : await ctx.loaders.namespaces.load(nsId);
    return info ? presentNamespace(info) : null;
  },
  groupCount: async (
    u: UserRow, _: unknown, ctx: GqlContext,
  ) => (isSelfOrAdmin(ctx, u.id) ? (await ctx.loaders.groupMemberships.load(u.id)).length : null),
  groupMemberships: async (u: UserRow, args: ConnectionArgs, ctx: GqlContext) =>
    (isSelfOrAdmin(ctx, u.id) ? connectionFromArray(await ctx.loaders.groupMemberships.load(u.id), args, 'asc') : null),
  projectMemberships: async (u: UserRow, args: ConnectionArgs, ctx: GqlContext) =>
    (isSelfOrAdmin(ctx, u.id) ? connectionFromArray(await ctx.loaders.projectMemberships.load(u.id), args, 'asc') : null),
};

function tooMany(name: string): GraphQLError {
  return new GraphQLError(`At most ${MAX_LIST} ${name} can be given`);
}

export const resolvers = {
  User: { __resolveType: () => 'UserCore' },
  MemberInterface: { __resolveType: (m: MemberRow) => (m.source_type === 'Project' ? 'ProjectMember' : 'GroupMember') },
  UserCore: userFields,
  Email: { id: (e: { gid: string }) => e.gid },
  GroupMember: {
    ...memberFields,
    id: (m: MemberRow) => toGid(MODELS.groupMember, m.id),
    group: async (m: MemberRow, _: unknown, ctx: GqlContext) => {
      const info = await ctx.loaders.namespaces.load(m.source_id);
      if (!info || info.namespace.kind !== 'group') return null;
      const actor = await ctx.loaders.groupActors.load(info.namespace.id);
      return canOnGroup(actor, 'read_group', info.namespace) ? info : null;
    },
  },
  ProjectMember: {
    ...memberFields,
    id: (m: MemberRow) => toGid(MODELS.projectMember, m.id),
    project: (m: MemberRow, _: unknown, ctx: GqlContext) => projectById(ctx, m.source_id),
  },
  Query: {
    currentUser: (_: unknown, __: unknown, ctx: GqlContext) => ctx.viewer,
    user: async (_: unknown, args: { id?: ParsedGid | null; username?: string | null }, ctx: GqlContext) => {
      const given = (args.id ? 1 : 0) + (typeof args.username === 'string' ? 1 : 0);
      if (given !== 1) throw new GraphQLError('Provide either a single username or id');
      if (args.id) return await findUserById(ctx.kiln.db, args.id.id) ?? null;
      return await findUserByUsername(ctx.kiln.db, boundedText(args.username!, 'username')) ?? null;
    },
    users: async (
      _: unknown,
      args: ConnectionArgs & { ids?: string[] | null; usernames?: string[] | null; sort: string; search?: string | null; admins: boolean },
      ctx: GqlContext,
    ) => {
      if (args.ids && args.ids.length > MAX_LIST) throw tooMany('ids');
      if (args.usernames && args.usernames.length > MAX_LIST) throw tooMany('usernames');
      const ids = args.ids?.map((raw) => {
        const gid = parseGid(raw);
        if (!gid || gid.model !== MODELS.user) throw new GraphQLError(`${JSON.stringify(raw)} does not represent an instance of User`);
        return gid.id;
      });
      const search = optionalText(args.search, 'search');
      const usernames = args.usernames?.map((u) => boundedText(u, 'usernames'));
      // As REST's GET /users (reference §1.4): anonymous callers may only look users up by username.
      if (!ctx.viewer && !args.usernames) throw resourceNotAvailable();
      const admin = ctx.viewer?.admin === 1;
      const direction = args.sort.endsWith('_asc') ? 'asc' : 'desc';
      const query = restrictUsers(findUsers(ctx.kiln.db, {
        admin, search, admins: admin && args.admins ? true : undefined, orderBy: 'id', sort: direction,
      }), { ids, usernames });
      return connectionFromQuery(query, args, direction, 'users.id');
    },
  },
};
