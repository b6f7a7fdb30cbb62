/** Every Kysely call of the users area. Small functions taking (db | trx, …). */
import { isStorableText } from '../../db/constraints.ts';
import { PostgresAdapter, sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DB, NewUser, UserRow, UserUpdate } from '../../db/types.ts';
import { param, prepared } from '../../db/prepared.ts';
import { cachedRead, cachedReadNow } from '../../db/read-cache.ts';
import { nowIso, todayDate } from '../clock.ts';
import { announceCredentialEvents, userChanged } from '../auth/credential-events.ts';

type Db = Kysely<DB> | Transaction<DB>;

const userByIdQuery = prepared((db) => db.selectFrom('users').selectAll().where('id', '=', param<number>(0)));

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return userByIdQuery.first(db, [id]);
}

export function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  // No username holds NUL or passes 255 characters; such text names nobody (and PostgreSQL refuses NUL).
  if (username.length > 255 || !isStorableText(username)) return Promise.resolve(undefined);
  return db.selectFrom('users').selectAll()
    .where(sql`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst();
}

/** All digits means an id, anything else an exact, case-insensitive username (reference §1.1). */
export function findUserByIdOrUsername(db: Db, identifier: string): Promise<UserRow | undefined> {
  if (/^\d+$/.test(identifier)) {
    const id = Number(identifier);
    return Number.isSafeInteger(id) && id <= 2_147_483_647 ? findUserById(db, id) : Promise.resolve(undefined);
  }
  return findUserByUsername(db, identifier);
}

/** Inserts a user and their personal namespace in one transaction (the caller's, when given one). */
export async function insertUserWithNamespace(
  db: Db,
  user: Omit<NewUser, 'created_at' | 'updated_at'>,
  opts: { id?: number } = {},
): Promise<UserRow> {
  const inTransaction = (work: (trx: Db) => Promise<UserRow>) =>
    (db.isTransaction ? work(db) : (db as Kysely<DB>).transaction().execute(work));
  return inTransaction(async (trx) => {
    const now = nowIso();
    const row = await trx.insertInto('users')
      .values({ ...user, ...(opts.id ? { id: opts.id } : {}), created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx.insertInto('namespaces')
      .values({ name: row.name, path: row.username, kind: 'user', owner_id: row.id, created_at: now, updated_at: now })
      .execute();
    return row;
  });
}

const personalNamespaceQuery = prepared((db) => db.selectFrom('namespaces').select('id')
  .where('owner_id', '=', param<number>(0)).where('kind', '=', 'user'));

/** The user's own namespace (a hot read of the administrator's and the user's own view). */
export function personalNamespaceId(db: Db, userId: number): Promise<number | null> {
  return cachedRead(
    db as Kysely<DB>,
    `personal-namespace:${userId}`,
    async () => (await personalNamespaceQuery.first(db, [userId]))?.id ?? null,
  );
}

/** Records today's activity; a no-op when it is already recorded, so callers may call it freely. */
export async function touchLastActivity(db: Db, userId: number, now: Date = new Date()): Promise<void> {
  const today = todayDate(now);
  await db.updateTable('users').set({ last_activity_on: today })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('last_activity_on', 'is', null), eb('last_activity_on', '<', today)]))
    .execute();
}

export interface FollowCounts {
  followers: number;
  following: number;
}

export async function followCounts(db: Db, userId: number): Promise<FollowCounts> {
  const row = await db.selectNoFrom((eb) => [
    eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).where('followee_id', '=', userId).as('followers'),
    eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).where('follower_id', '=', userId).as('following'),
  ]).executeTakeFirstOrThrow();
  return { followers: Number(row.followers ?? 0), following: Number(row.following ?? 0) };
}

export async function isFollowing(db: Db, followerId: number, followeeId: number): Promise<boolean> {
  const row = await db.selectFrom('user_follows').select('follower_id')
    .where('follower_id', '=', followerId).where('followee_id', '=', followeeId)
    .executeTakeFirst();
  return row !== undefined;
}

export function identitiesOf(db: Db, userIds: number[]) {
  if (userIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('identities').select(['user_id', 'provider', 'extern_uid', 'saml_provider_id'])
    .where('user_id', 'in', userIds).orderBy('id').execute();
}

const identitiesOfUserQuery = prepared((db) => db.selectFrom('identities').select(['user_id', 'provider', 'extern_uid', 'saml_provider_id'])
  .where('user_id', '=', param<number>(0)).orderBy('id'));

/** One user's identities (a hot read of the administrator's and the user's own view); callers must not mutate them. */
export function identitiesOfUser(db: Db, userId: number) {
  return cachedRead(db as Kysely<DB>, `identities:${userId}`, () => identitiesOfUserQuery.all(db, [userId]));
}

export function customAttributesOf(db: Db, userIds: number[]) {
  if (userIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('user_custom_attributes').select(['user_id', 'key', 'value'])
    .where('user_id', 'in', userIds).orderBy('id').execute();
}

export interface UserProfileRow extends UserRow {
  followers: number;
  following: number;
  is_followed: number;
}

/**
 * A user's follower and following counts and whether `viewerId` follows them, as correlated
 * subqueries of a query on users (user_follows' primary key and user_follows_followee serve them).
 */
function followColumns(eb: ExpressionBuilder<DB, 'users'>, viewerId: number) {
  return [
    eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).whereRef('followee_id', '=', 'users.id').as('followers'),
    eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).whereRef('follower_id', '=', 'users.id').as('following'),
    eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c'))
      .whereRef('followee_id', '=', 'users.id').where('follower_id', '=', viewerId).as('is_followed'),
  ];
}

const userProfileQuery = prepared((db) => db.selectFrom('users')
  .selectAll('users')
  .select((eb) => followColumns(eb, param<number>(1)))
  .where('users.id', '=', param<number>(0)));

/**
 * A user with follower counts and whether `viewerId` follows them, in one round trip (a hot path:
 * compiled once, and remembered until the next write; see db/read-cache.ts). Callers must not
 * mutate the row they get.
 */
export async function findUserProfile(db: Db, id: number, viewerId: number | null): Promise<UserProfileRow | undefined> {
  return userProfileNow(db, id, viewerId);
}

/** findUserProfile, answering synchronously when the row is remembered (GET /users/:id's fast path). */
export function userProfileNow(
  db: Db,
  id: number,
  viewerId: number | null,
): UserProfileRow | undefined | Promise<UserProfileRow | undefined> {
  return cachedReadNow(db as Kysely<DB>, `user-profile:${id}:${viewerId ?? 0}`, async () => {
    const row = await userProfileQuery.first(db, [id, viewerId ?? 0]);
    if (!row) return undefined;
    return {
      ...row,
      followers: Number(row.followers),
      following: Number(row.following),
      is_followed: Number(row.is_followed),
    } as UserProfileRow;
  });
}

/** What an administrator's list shows of each user beyond the row: UserWithAdmin's extras, as columns. */
export interface UserListExtrasRow {
  followers: number | string;
  following: number | string;
  is_followed: number | string;
  namespace_id: number | null;
  /** JSON text on SQLite, parsed already on PostgreSQL. */
  identities: string | { provider: string; extern_uid: string; saml_provider_id: number | null }[] | null;
}

/**
 * Adds UserWithAdmin's extras to a page of users as correlated subqueries, so the page is one
 * statement (each is an index probe per row: followColumns', namespaces_owner,
 * identities_user_provider_saml). `viewerId` is a bound value.
 */
export function selectUserListExtras<QB extends SelectQueryBuilder<DB, 'users', object>>(db: Kysely<DB>, qb: QB, viewerId: number) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const identities = postgres
    ? sql<UserListExtrasRow['identities']>`(select coalesce(json_agg(json_build_object('provider', i.provider, 'extern_uid', i.extern_uid, 'saml_provider_id', i.saml_provider_id) order by i.id), '[]') from identities i where i.user_id = users.id)`
    // Unordered here (an ORDER BY inside would sort per row): listedIdentities orders them by id.
    : sql<UserListExtrasRow['identities']>`(select json_group_array(json_object('id', i.id, 'provider', i.provider, 'extern_uid', i.extern_uid, 'saml_provider_id', i.saml_provider_id)) from identities i where i.user_id = users.id)`;
  return qb.select((eb) => [
    ...followColumns(eb as unknown as ExpressionBuilder<DB, 'users'>, viewerId),
    eb.selectFrom('namespaces')
      .select('namespaces.id')
      .whereRef('namespaces.owner_id', '=', 'users.id')
      .where('namespaces.kind', '=', 'user')
      .limit(1)
      .as('namespace_id'),
    identities.as('identities'),
  ]);
}

/** The identities column of selectUserListExtras, parsed. */
export function listedIdentities(
  value: UserListExtrasRow['identities'],
): { provider: string; extern_uid: string; saml_provider_id: number | null }[] {
  // Most users have none: SQLite's json_group_array writes '[]', not parsed for every row of a page.
  if (value === null || value === '[]') return [];
  type ListedIdentity = { id?: number; provider: string; extern_uid: string; saml_provider_id: number | null };
  const list = (typeof value === 'string' ? JSON.parse(value) : value) as ListedIdentity[];
  if (list.length > 1 && list[0].id !== undefined) list.sort((a, b) => a.id! - b.id!);
  return list.map(({ provider, extern_uid, saml_provider_id }) => ({ provider, extern_uid, saml_provider_id }));
}

/** Personal namespace ids of several users, by user id. */
export async function personalNamespaceIds(db: Db, userIds: number[]): Promise<Map<number, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('namespaces').select(['id', 'owner_id'])
    .where('owner_id', 'in', userIds).where('kind', '=', 'user').execute();
  return new Map(rows.map((r) => [r.owner_id as number, r.id]));
}

/** Whether `email` is any user's primary or secondary email (but `exceptUserId`'s), without regard to case. */
export async function emailTaken(db: Db, email: string, exceptUserId: number | null): Promise<boolean> {
  const lower = email.toLowerCase();
  const primary = await db.selectFrom('users').select('id')
    .where(sql`lower(email)`, '=', lower).where('id', '!=', exceptUserId ?? 0).executeTakeFirst();
  if (primary) return true;
  const secondary = await db.selectFrom('emails').select('id')
    .where(sql`lower(email)`, '=', lower).where('user_id', '!=', exceptUserId ?? 0).executeTakeFirst();
  return secondary !== undefined;
}

export async function usernameTaken(db: Db, username: string, exceptUserId: number | null): Promise<boolean> {
  const row = await db.selectFrom('users').select('id')
    .where(sql`lower(username)`, '=', username.toLowerCase()).where('id', '!=', exceptUserId ?? 0).executeTakeFirst();
  return row !== undefined;
}

/** A top-level namespace (a group, or another user's personal namespace) already has this path. */
export async function rootPathTakenByOther(db: Db, path: string, userId: number | null): Promise<boolean> {
  const row = await db.selectFrom('namespaces').select('id')
    .where('parent_id', 'is', null)
    .where(sql`lower(path)`, '=', path.toLowerCase())
    .where((eb) => eb.or([eb('owner_id', 'is', null), eb('owner_id', '!=', userId ?? 0), eb('kind', '!=', 'user')]))
    .executeTakeFirst();
  return row !== undefined;
}

export async function publicEmailTaken(db: Db, email: string, exceptUserId: number | null): Promise<boolean> {
  const row = await db.selectFrom('users').select('id')
    .where(sql`lower(public_email)`, '=', email.toLowerCase()).where('id', '!=', exceptUserId ?? 0).executeTakeFirst();
  return row !== undefined;
}

/**
 * The emails a user owns for public_email / commit_email (lower case): the primary email (the new
 * one when it changes in the same request) and the confirmed secondary emails.
 */
export async function verifiedEmailsOf(db: Db, user: UserRow | null, newPrimary: string | undefined): Promise<Set<string>> {
  const out = new Set<string>();
  const primary = newPrimary ?? user?.email;
  if (primary) out.add(primary.toLowerCase());
  if (user) {
    const rows = await db.selectFrom('emails').select('email')
      .where('user_id', '=', user.id).where('confirmed_at', 'is not', null).execute();
    for (const r of rows) out.add(r.email.toLowerCase());
  }
  return out;
}

/**
 * Writes the user's attributes. Cached credentials carry the user's row, so the change is
 * announced (domain/auth/credential-events.ts): an admin flag or an expired password applies on
 * the next request. So are the state, two-factor and deletion writes below.
 */
export async function updateUserRow(db: Db, id: number, set: UserUpdate): Promise<UserRow> {
  const row = await db.updateTable('users')
    .set({ ...set, updated_at: nowIso() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await announceCredentialEvents(db, [userChanged(id, 'updated')]);
  return row;
}

/** Keeps the personal namespace's name and path in step with the user's name and username. */
export async function updatePersonalNamespace(db: Db, userId: number, set: { name?: string; path?: string }): Promise<void> {
  if (set.name === undefined && set.path === undefined) return;
  await db.updateTable('namespaces').set({ ...set, updated_at: nowIso() })
    .where('owner_id', '=', userId).where('kind', '=', 'user').execute();
}

/** An identity of `provider` whose extern_uid another user already has (case-insensitive). */
export async function externUidTaken(db: Db, provider: string, externUid: string, exceptUserId: number | null): Promise<boolean> {
  const row = await db.selectFrom('identities').select('id')
    .where('provider', '=', provider).where(sql`lower(extern_uid)`, '=', externUid.toLowerCase())
    .where('user_id', '!=', exceptUserId ?? 0).executeTakeFirst();
  return row !== undefined;
}

/** Sets the user's identity of `provider` (one per provider). */
export async function upsertIdentity(db: Db, userId: number, provider: string, externUid: string): Promise<void> {
  const updated = await db.updateTable('identities').set({ extern_uid: externUid })
    .where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await db.insertInto('identities').values({
    user_id: userId,
    provider,
    extern_uid: externUid,
    saml_provider_id: null,
    created_at: nowIso(),
  }).execute();
}

export function findIdentity(db: Db, userId: number, provider: string) {
  return db.selectFrom('identities').selectAll().where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
}

export async function deleteIdentity(db: Db, id: number): Promise<void> {
  await db.deleteFrom('identities').where('id', '=', id).execute();
}

/**
 * Moves the user from `from` to `to` unless someone else changed the state meanwhile; answers
 * whether this call made the change.
 */
export async function changeUserState(db: Db, userId: number, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('users').set({ state: to, updated_at: nowIso() })
    .where('id', '=', userId).where('state', '=', from).executeTakeFirst();
  const changed = Number(result.numUpdatedRows) > 0;
  if (changed) await announceCredentialEvents(db, [userChanged(userId, 'state')]);
  return changed;
}

export async function setTwoFactorRequired(db: Db, userId: number, required: boolean): Promise<void> {
  await db.updateTable('users').set({ otp_required_for_login: required ? 1 : 0, updated_at: nowIso() }).where('id', '=', userId).execute();
  await announceCredentialEvents(db, [userChanged(userId, 'two_factor')]);
}

export function findUserByType(db: Db, userType: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('user_type', '=', userType).orderBy('id').limit(1).executeTakeFirst();
}

/** Deletes the user row; their namespace, credentials, keys and other owned rows go with it (ON DELETE CASCADE). */
export async function deleteUserRow(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('users').where('id', '=', userId).execute();
  await announceCredentialEvents(db, [userChanged(userId, 'deleted')]);
}

/** A user's custom attributes in creation order, for paginate(). */
export function customAttributesQuery(db: Kysely<DB>, userId: number) {
  return db.selectFrom('user_custom_attributes').select(['key', 'value'])
    .where('user_id', '=', userId).orderBy('id');
}

export function findCustomAttribute(db: Db, userId: number, key: string) {
  return db.selectFrom('user_custom_attributes').selectAll()
    .where('user_id', '=', userId).where('key', '=', key).executeTakeFirst();
}

/** Sets `key` to `value`, creating the attribute when the user has none by that key. */
export async function upsertCustomAttribute(db: Db, userId: number, key: string, value: string): Promise<{ key: string; value: string }> {
  const now = nowIso();
  return db.insertInto('user_custom_attributes').values({ user_id: userId, key, value, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'key']).doUpdateSet({ value, updated_at: now }))
    .returning(['key', 'value'])
    .executeTakeFirstOrThrow();
}

export async function deleteCustomAttribute(db: Db, id: number): Promise<void> {
  await db.deleteFrom('user_custom_attributes').where('id', '=', id).execute();
}
