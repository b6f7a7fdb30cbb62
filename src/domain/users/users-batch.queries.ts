/**
 * Reads of users and what hangs off them for many users at once: the GraphQL API loads a whole
 * list's associations with one query per level (issue 18, item 5), keyed by user id.
 */
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { ByIds } from '../../db/query-shape.ts';
import { cachedRowsByIds } from '../../db/read-cache.ts';
import type { EmailRow } from '../../db/tables/emails.ts';
import type { UserStatusRow } from '../../db/tables/user-status.ts';
import type { MemberRow, MemberSourceType } from '../../db/tables/projects.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const usersById = new ByIds((db, ids) => db.selectFrom('users').selectAll().where('id', 'in', ids));

/** Users by id, in no particular order (compiled once per number of ids). */
export function findUsersByIds(db: Db, ids: readonly number[]): Promise<UserRow[]> {
  return usersById.all(db as Kysely<DB>, ids);
}

/**
 * The columns of UserBasic only (id, username, name, state, avatar), for lists that show people
 * beside their own rows: a users row is wide, and a page of issues or merge requests names twenty
 * or more users, so reading every column is most of such a query's time.
 */
const userBasicsById = new ByIds((db, ids) => db.selectFrom('users').select(['id', 'username', 'name', 'state', 'avatar'])
  .where('id', 'in', ids));

export function findUserBasicsByIds(db: Db, ids: readonly number[]) {
  return userBasicsById.all(db as Kysely<DB>, ids);
}

/**
 * The same, each user remembered until the next write (db/read-cache.ts cachedRowsByIds): the
 * authors and assignees of a project's issues and merge requests are the same few people page
 * after page (bench/queries.ts, 22 users of a page of merge requests: 17.5 µs of its 150 µs of
 * statements). Rows are shared between requests: read them, never change them.
 */
export function rememberedUserBasicsByIds(db: Kysely<DB>, ids: readonly number[]) {
  return cachedRowsByIds(db, 'user-basic', ids, (missing) => userBasicsById.all(db, missing));
}

export async function findUsersByUsernames(db: Db, usernames: readonly string[]): Promise<UserRow[]> {
  if (usernames.length === 0) return [];
  const lowered = [...new Set(usernames.map((u) => u.toLowerCase()))];
  return db.selectFrom('users').selectAll().where(sql`lower(username)`, 'in', lowered).execute();
}

/** Secondary emails of these users, oldest first. */
export async function emailsOfUsers(db: Db, userIds: readonly number[]): Promise<EmailRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('emails').selectAll().where('user_id', 'in', [...new Set(userIds)]).orderBy('id').execute();
}

/** Statuses still in force at `nowIso` (an expired status no longer counts, as findCurrentStatus). */
export async function currentStatusesOf(db: Db, userIds: readonly number[], nowIso: string): Promise<UserStatusRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('user_statuses').selectAll().where('user_id', 'in', [...new Set(userIds)])
    .where((eb) => eb.or([eb('clear_status_at', 'is', null), eb('clear_status_at', '>', nowIso)]))
    .execute();
}

/** Direct memberships of these users in sources of one type, in membership order. */
export async function membershipsOfUsers(db: Db, userIds: readonly number[], sourceType: MemberSourceType): Promise<MemberRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('members').selectAll().where('user_id', 'in', [...new Set(userIds)])
    .where('source_type', '=', sourceType).orderBy('id').execute();
}

/** Narrows a users query (users.finder.ts) to given ids and usernames (GraphQL `users(ids, usernames)`). */
export function restrictUsers<Q extends SelectQueryBuilder<DB, 'users', UserRow>>(qb: Q, f: { ids?: number[]; usernames?: string[] }): Q {
  let q: SelectQueryBuilder<DB, 'users', UserRow> = qb;
  if (f.ids) q = f.ids.length === 0 ? q.where(sql<boolean>`1 = 0`) : q.where('users.id', 'in', f.ids);
  if (f.usernames) {
    q = f.usernames.length === 0 ? q.where(sql<boolean>`1 = 0`)
      : q.where(sql`lower(users.username)`, 'in', f.usernames.map((u) => u.toLowerCase()));
  }
  return q as Q;
}
