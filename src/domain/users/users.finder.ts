/**
 * GET /users as the Service's UsersFinder builds it (reference §1.4): a base scope for the viewer,
 * then one small filter per parameter, then the order. Each filter leaves the query alone when
 * its parameter is absent (or false: the Service supports only the `true` forms of the booleans).
 * Which parameters a viewer may use at all is the route's decision; this file only filters.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { NON_INTERNAL_USER_TYPES, USER_TYPES } from './user-kind.ts';

export type UsersOrderBy = 'id' | 'name' | 'username' | 'created_at' | 'updated_at';

export interface UsersFinderParams {
  /** Administrators see every state and may match private emails in `search`. */
  admin: boolean;
  search?: string;
  username?: string;
  active?: boolean;
  blocked?: boolean;
  external?: boolean;
  excludeInternal?: boolean;
  excludeExternal?: boolean;
  withoutProjectBots?: boolean;
  externUid?: string;
  provider?: string;
  createdBefore?: string;
  createdAfter?: string;
  customAttributes?: Record<string, string>;
  twoFactor?: string;
  withoutProjects?: boolean;
  admins?: boolean;
  samlProviderId?: number;
  orderBy: UsersOrderBy;
  sort: 'asc' | 'desc';
}

type UsersQuery = SelectQueryBuilder<DB, 'users', UserRow>;
type Filter = (qb: UsersQuery, p: UsersFinderParams) => UsersQuery;

/** LIKE pattern for a substring, with the user's own wildcards taken literally. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Non-administrators never see blocked, LDAP-blocked or banned users (`without_forbidden_states`). */
const baseScope: Filter = (qb, p) => (p.admin ? qb : qb.where('users.state', 'not in', ['blocked', 'ldap_blocked', 'banned']));

const byUsername: Filter = (qb, p) => (p.username === undefined ? qb : qb.where(sql`lower(users.username)`, '=', p.username.toLowerCase()));

/** Substring of name or username, or the exact public email; administrators also match the exact email. */
const bySearch: Filter = (qb, p) => {
  if (p.search === undefined || p.search === '') return qb;
  const pattern = containsPattern(p.search);
  const exact = p.search.toLowerCase();
  return qb.where((eb) => eb.or([
    eb(sql`lower(users.name)`, 'like', sql`${pattern} escape '\\'`),
    eb(sql`lower(users.username)`, 'like', sql`${pattern} escape '\\'`),
    eb(sql`lower(users.public_email)`, '=', exact),
    ...(p.admin ? [eb(sql`lower(users.email)`, '=', exact)] : []),
  ]));
};

/** `active` is state active and not an internal user (User.active scope). */
const byActive: Filter = (qb, p) => (p.active
  ? qb.where('users.state', '=', 'active').where('users.user_type', 'in', NON_INTERNAL_USER_TYPES)
  : qb);

/** `blocked` covers blocked and ldap_blocked only, not banned or pending approval. */
const byBlocked: Filter = (qb, p) => (p.blocked ? qb.where('users.state', 'in', ['blocked', 'ldap_blocked']) : qb);

const byExternal: Filter = (qb, p) => (p.external ? qb.where('users.external', '=', 1) : qb);
const byExcludeExternal: Filter = (qb, p) => (p.excludeExternal ? qb.where('users.external', '=', 0) : qb);
const byExcludeInternal: Filter = (qb, p) => (p.excludeInternal ? qb.where('users.user_type', 'in', NON_INTERNAL_USER_TYPES) : qb);
const byWithoutProjectBots: Filter = (qb, p) => (p.withoutProjectBots ? qb.where('users.user_type', '!=', USER_TYPES.project_bot) : qb);
const byAdmins: Filter = (qb, p) => (p.admins ? qb.where('users.admin', '=', 1) : qb);

const byTwoFactor: Filter = (qb, p) => {
  if (p.twoFactor === 'enabled') return qb.where('users.otp_required_for_login', '=', 1);
  if (p.twoFactor === 'disabled') return qb.where('users.otp_required_for_login', '=', 0);
  return qb;
};

/** An identity of `provider` whose extern_uid matches without regard to case. */
const byExternUid: Filter = (qb, p) => {
  if (p.externUid === undefined || p.provider === undefined) return qb;
  const { externUid, provider } = p;
  return qb.where((eb) => eb.exists(eb.selectFrom('identities').select('identities.id')
    .whereRef('identities.user_id', '=', 'users.id')
    .where('identities.provider', '=', provider)
    .where(sql`lower(identities.extern_uid)`, '=', externUid.toLowerCase())));
};

const bySamlProvider: Filter = (qb, p) => {
  if (p.samlProviderId === undefined) return qb;
  const id = p.samlProviderId;
  return qb.where((eb) => eb.exists(eb.selectFrom('identities').select('identities.id')
    .whereRef('identities.user_id', '=', 'users.id').where('identities.saml_provider_id', '=', id)));
};

const byCreatedBefore: Filter = (qb, p) => (p.createdBefore === undefined ? qb : qb.where('users.created_at', '<', p.createdBefore));
const byCreatedAfter: Filter = (qb, p) => (p.createdAfter === undefined ? qb : qb.where('users.created_at', '>', p.createdAfter));

/** Every `custom_attributes[key]=value` pair must match. */
const byCustomAttributes: Filter = (qb, p) => {
  let q = qb;
  for (const [key, value] of Object.entries(p.customAttributes ?? {})) {
    q = q.where((eb) => eb.exists(eb.selectFrom('user_custom_attributes').select('user_custom_attributes.id')
      .whereRef('user_custom_attributes.user_id', '=', 'users.id')
      .where('user_custom_attributes.key', '=', key)
      .where('user_custom_attributes.value', '=', value)));
  }
  return q;
};

/**
 * Users without any project membership (the owner of a personal project is its member), as the
 * Service's `without_projects` scope. A row whose project went with its owner's namespace is no
 * membership. Served by members_user (user_id, source_type, …) and the projects primary key.
 */
const byWithoutProjects: Filter = (qb, p) => (p.withoutProjects
  ? qb.where((eb) => eb.not(eb.exists(eb.selectFrom('members')
    .innerJoin('projects', 'projects.id', 'members.source_id')
    .select('members.id')
    .whereRef('members.user_id', '=', 'users.id')
    .where('members.source_type', '=', 'Project'))))
  : qb);

/** `created_at` orders by id, as the Service does; id is always the tie-breaker (reference §1.4). */
const ordered: Filter = (qb, p) => {
  const column = p.orderBy === 'created_at' ? 'id' : p.orderBy;
  const q = qb.orderBy(`users.${column}`, p.sort);
  return column === 'id' ? q : q.orderBy('users.id', p.sort);
};

const PIPELINE: Filter[] = [
  baseScope, byUsername, bySearch, byActive, byBlocked, byExternal, byExcludeExternal, byExcludeInternal,
  byWithoutProjectBots, byAdmins, byTwoFactor, byExternUid, bySamlProvider, byCreatedBefore, byCreatedAfter,
  byCustomAttributes, byWithoutProjects, ordered,
];

/** The filtered, ordered query; the caller paginates it. */
export function findUsers(db: Kysely<DB>, params: UsersFinderParams): UsersQuery {
  return PIPELINE.reduce((qb, filter) => filter(qb, params), db.selectFrom('users').selectAll('users') as UsersQuery);
}
