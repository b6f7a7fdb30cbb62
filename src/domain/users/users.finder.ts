/**
 * GET /users as the Service's UsersFinder builds it (reference §1.4): a base scope for the viewer,
 * then one small filter per parameter, then the order. Each filter leaves the query alone when
 * its parameter is absent (or false: the Service supports only the `true` forms of the booleans).
 * Which parameters a viewer may use at all is the route's decision; this file only filters.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { NON_INTERNAL_USER_TYPES, USER_TYPES } from './user-kind.ts';
import { QueryShape } from '../../db/query-shape.ts';

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

/** The users table before anything is selected: where the filters start. */
export type UsersFrom = SelectQueryBuilder<DB, 'users', object>;
type Filter = (shape: QueryShape<UsersFrom>, p: UsersFinderParams) => void;

/** LIKE pattern for a substring, with the user's own wildcards taken literally. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Non-administrators never see blocked, LDAP-blocked or banned users (`without_forbidden_states`). */
const baseScope: Filter = (shape, p) => {
  if (!p.admin) shape.step('visible', (qb) => qb.where('users.state', 'not in', ['blocked', 'ldap_blocked', 'banned']));
};

const byUsername: Filter = (shape, p) => {
  if (p.username === undefined) return;
  const username = shape.arg(p.username.toLowerCase());
  shape.step('username', (qb) => qb.where(sql`lower(users.username)`, '=', username));
};

/**
 * User.search: a substring of the name or username, or the exact public email; administrators
 * also match the exact email. `pattern` is containsPattern(search), `exact` the search in lower
 * case (both values or, in a shape, their placeholders).
 */
export function userMatches(eb: ExpressionBuilder<DB, 'users'>, pattern: string, exact: string, admin: boolean): Expression<SqlBool> {
  return eb.or([
    eb(sql`lower(users.name)`, 'like', sql`${pattern} escape '\\'`),
    eb(sql`lower(users.username)`, 'like', sql`${pattern} escape '\\'`),
    eb(sql`lower(users.public_email)`, '=', exact),
    ...(admin ? [eb(sql`lower(users.email)`, '=', exact)] : []),
  ]);
}

const bySearch: Filter = (shape, p) => {
  if (p.search === undefined || p.search === '') return;
  const pattern = shape.arg(containsPattern(p.search));
  const exact = shape.arg(p.search.toLowerCase());
  const admin = p.admin;
  shape.step(admin ? 'search+email' : 'search', (qb) => qb.where((eb) => userMatches(eb, pattern, exact, admin)));
};

/** `active` is state active and not an internal user (User.active scope). */
const byActive: Filter = (shape, p) => {
  if (p.active) {
    shape.step('active', (qb) => qb.where('users.state', '=', 'active').where('users.user_type', 'in', NON_INTERNAL_USER_TYPES));
  }
};

/** `blocked` covers blocked and ldap_blocked only, not banned or pending approval. */
const byBlocked: Filter = (shape, p) => {
  if (p.blocked) shape.step('blocked', (qb) => qb.where('users.state', 'in', ['blocked', 'ldap_blocked']));
};

const byExternal: Filter = (shape, p) => {
  if (p.external) shape.step('external', (qb) => qb.where('users.external', '=', 1));
};
const byExcludeExternal: Filter = (shape, p) => {
  if (p.excludeExternal) shape.step('exclude_external', (qb) => qb.where('users.external', '=', 0));
};
const byExcludeInternal: Filter = (shape, p) => {
  if (p.excludeInternal) shape.step('exclude_internal', (qb) => qb.where('users.user_type', 'in', NON_INTERNAL_USER_TYPES));
};
const byWithoutProjectBots: Filter = (shape, p) => {
  if (p.withoutProjectBots) shape.step('without_project_bots', (qb) => qb.where('users.user_type', '!=', USER_TYPES.project_bot));
};
const byAdmins: Filter = (shape, p) => {
  if (p.admins) shape.step('admins', (qb) => qb.where('users.admin', '=', 1));
};

const byTwoFactor: Filter = (shape, p) => {
  if (p.twoFactor === 'enabled') shape.step('two_factor', (qb) => qb.where('users.otp_required_for_login', '=', 1));
  if (p.twoFactor === 'disabled') shape.step('no_two_factor', (qb) => qb.where('users.otp_required_for_login', '=', 0));
};

/** An identity of `provider` whose extern_uid matches without regard to case. */
const byExternUid: Filter = (shape, p) => {
  if (p.externUid === undefined || p.provider === undefined) return;
  const provider = shape.arg(p.provider);
  const externUid = shape.arg(p.externUid.toLowerCase());
  shape.step('extern_uid', (qb) => qb.where((eb) => eb.exists(eb.selectFrom('identities').select('identities.id')
    .whereRef('identities.user_id', '=', 'users.id')
    .where('identities.provider', '=', provider)
    .where(sql`lower(identities.extern_uid)`, '=', externUid))));
};

const bySamlProvider: Filter = (shape, p) => {
  if (p.samlProviderId === undefined) return;
  const id = shape.arg(p.samlProviderId);
  shape.step('saml_provider', (qb) => qb.where((eb) => eb.exists(eb.selectFrom('identities').select('identities.id')
    .whereRef('identities.user_id', '=', 'users.id').where('identities.saml_provider_id', '=', id))));
};

const byCreatedBefore: Filter = (shape, p) => {
  if (p.createdBefore === undefined) return;
  const at = shape.arg(p.createdBefore);
  shape.step('created_before', (qb) => qb.where('users.created_at', '<', at));
};
const byCreatedAfter: Filter = (shape, p) => {
  if (p.createdAfter === undefined) return;
  const at = shape.arg(p.createdAfter);
  shape.step('created_after', (qb) => qb.where('users.created_at', '>', at));
};

/** Every `custom_attributes[key]=value` pair must match. */
const byCustomAttributes: Filter = (shape, p) => {
  for (const [k, v] of Object.entries(p.customAttributes ?? {})) {
    const key = shape.arg(k);
    const value = shape.arg(v);
    shape.step('custom_attribute', (qb) => qb.where((eb) => eb.exists(eb.selectFrom('user_custom_attributes')
      .select('user_custom_attributes.id')
      .whereRef('user_custom_attributes.user_id', '=', 'users.id')
      .where('user_custom_attributes.key', '=', key)
      .where('user_custom_attributes.value', '=', value))));
  }
};

/**
 * Users without any project membership (the owner of a personal project is its member), as the
 * Service's `without_projects` scope. A row whose project went with its owner's namespace is no
 * membership. Served by members_user (user_id, source_type, …) and the projects primary key.
 */
const byWithoutProjects: Filter = (shape, p) => {
  if (!p.withoutProjects) return;
  shape.step('without_projects', (qb) => qb.where((eb) => eb.not(eb.exists(eb.selectFrom('members')
    .innerJoin('projects', 'projects.id', 'members.source_id')
    .select('members.id')
    .whereRef('members.user_id', '=', 'users.id')
    .where('members.source_type', '=', 'Project')))));
};

/** `created_at` orders by id, as the Service does; id is always the tie-breaker (reference §1.4). */
const ordered: Filter = (shape, p) => {
  const column = p.orderBy === 'created_at' ? 'id' : p.orderBy;
  const sort = p.sort;
  shape.order(`${column}:${sort}`, (qb) => {
    const q = qb.orderBy(`users.${column}`, sort);
    return column === 'id' ? q : q.orderBy('users.id', sort);
  });
};

const PIPELINE: Filter[] = [
  baseScope, byUsername, bySearch, byActive, byBlocked, byExternal, byExcludeExternal, byExcludeInternal,
  byWithoutProjectBots, byAdmins, byTwoFactor, byExternUid, bySamlProvider, byCreatedBefore, byCreatedAfter,
  byCustomAttributes, byWithoutProjects, ordered,
];

/** The filters and order of a users list, as a shape compiled once (db/query-shape.ts); the caller selects and paginates. */
export function usersShape(params: UsersFinderParams, opts: { inline?: boolean } = {}): QueryShape<UsersFrom> {
  const shape = new QueryShape<UsersFrom>(opts);
  for (const filter of PIPELINE) filter(shape, params);
  return shape;
}

/** The filtered, ordered query of whole rows, built with its values (GraphQL's users connection narrows it further). */
export function findUsers(db: Kysely<DB>, params: UsersFinderParams): SelectQueryBuilder<DB, 'users', UserRow> {
  return usersShape(params, { inline: true }).apply(db.selectFrom('users')).selectAll('users');
}
