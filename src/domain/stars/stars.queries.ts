/**
 * Stars of projects (the Service's UsersStarProject): starring and unstarring as single
 * statements whose effect says whether anything changed (the unique pair index decides a race),
 * the counts a page of projects shows, and a project's starrers.
 */
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { ByIds } from '../../db/query-shape.ts';
import { nowIso } from '../clock.ts';
import { containsPattern, userMatches } from '../users/users.finder.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Stars the project for the user; false when it was starred already. */
export async function starProject(db: Db, userId: number, projectId: number): Promise<boolean> {
  const result = await db.insertInto('users_star_projects').values({ user_id: userId, project_id: projectId, created_at: nowIso() })
    .onConflict((oc) => oc.columns(['user_id', 'project_id']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Removes the user's star; false when there was none. */
export async function unstarProject(db: Db, userId: number, projectId: number): Promise<boolean> {
  const result = await db.deleteFrom('users_star_projects').where('user_id', '=', userId).where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const starCountsById = new ByIds((db, ids) => db.selectFrom('users_star_projects')
  .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')]).where('project_id', 'in', ids).groupBy('project_id'));

/** star_count of each project (absent: none). */
export async function starCountsOf(db: Kysely<DB>, projectIds: readonly number[]): Promise<Map<number, number>> {
  return new Map((await starCountsById.all(db, projectIds)).map((r) => [r.project_id, Number(r.n)]));
}

/**
 * A project's starrers in the order they starred it (UsersStarProjectsFinder): users whose
 * profile the viewer may see (a private profile to its owner and administrators), matched by
 * `search` in their name or username, or their public email exactly.
 */
export function starrersQuery(db: Kysely<DB>, projectId: number, viewer: UserRow | null, search: string | undefined) {
  let qb = db.selectFrom('users_star_projects').innerJoin('users', 'users.id', 'users_star_projects.user_id')
    .selectAll('users').select('users_star_projects.created_at as starred_since')
    .where('users_star_projects.project_id', '=', projectId);
  if (!viewer?.admin) {
    qb = qb.where((eb) => eb.or([eb('users.private_profile', '=', 0), ...(viewer ? [eb('users.id', '=', viewer.id)] : [])]));
  }
  if (search) {
    qb = qb.where((eb) => userMatches(eb as ExpressionBuilder<DB, 'users'>, containsPattern(search), search.toLowerCase(), false));
  }
  return qb.orderBy('users_star_projects.id', 'asc');
}
