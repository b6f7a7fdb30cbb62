/** Every Kysely call of the users area. Small functions taking (db | trx, …). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, NewUser, UserRow } from '../../db/types.ts';
import { nowIso, todayDate } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
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

/** Inserts a user and their personal namespace in one transaction. */
export async function insertUserWithNamespace(db: Kysely<DB>, user: Omit<NewUser, 'created_at' | 'updated_at'>, opts: { id?: number } = {}): Promise<UserRow> {
  return db.transaction().execute(async (trx) => {
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

export async function personalNamespaceId(db: Db, userId: number): Promise<number | null> {
  const row = await db.selectFrom('namespaces').select('id')
    .where('owner_id', '=', userId).where('kind', '=', 'user')
    .executeTakeFirst();
  return row?.id ?? null;
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

/** A user with follower counts and whether `viewerId` follows them, in one round trip. */
export async function findUserProfile(db: Db, id: number, viewerId: number | null): Promise<UserProfileRow | undefined> {
  const row = await db.selectFrom('users')
    .selectAll('users')
    .select((eb) => [
      eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).whereRef('followee_id', '=', 'users.id').as('followers'),
      eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c')).whereRef('follower_id', '=', 'users.id').as('following'),
      eb.selectFrom('user_follows').select((e) => e.fn.countAll<number>().as('c'))
        .whereRef('followee_id', '=', 'users.id').where('follower_id', '=', viewerId ?? 0).as('is_followed'),
    ])
    .where('users.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return { ...row, followers: Number(row.followers), following: Number(row.following), is_followed: Number(row.is_followed) } as UserProfileRow;
}

/** Personal namespace ids of several users, by user id. */
export async function personalNamespaceIds(db: Db, userIds: number[]): Promise<Map<number, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('namespaces').select(['id', 'owner_id'])
    .where('owner_id', 'in', userIds).where('kind', '=', 'user').execute();
  return new Map(rows.map((r) => [r.owner_id as number, r.id]));
}

/** Follower and following counts of several users, and which of them `viewerId` follows. */
export async function followSummaries(db: Db, userIds: number[], viewerId: number | null): Promise<Map<number, FollowCounts & { isFollowed: boolean }>> {
  const out = new Map(userIds.map((id) => [id, { followers: 0, following: 0, isFollowed: false }]));
  if (userIds.length === 0) return out;
  const [followers, following, followed] = await Promise.all([
    db.selectFrom('user_follows').select((eb) => ['followee_id as id', eb.fn.countAll<number>().as('n')])
      .where('followee_id', 'in', userIds).groupBy('followee_id').execute(),
    db.selectFrom('user_follows').select((eb) => ['follower_id as id', eb.fn.countAll<number>().as('n')])
      .where('follower_id', 'in', userIds).groupBy('follower_id').execute(),
    viewerId === null ? Promise.resolve([]) : db.selectFrom('user_follows').select('followee_id as id')
      .where('follower_id', '=', viewerId).where('followee_id', 'in', userIds).execute(),
  ]);
  for (const r of followers) out.get(r.id)!.followers = Number(r.n);
  for (const r of following) out.get(r.id)!.following = Number(r.n);
  for (const r of followed) out.get(r.id)!.isFollowed = true;
  return out;
}
