/** Projects by id, many at once (the GraphQL API's batch loaders). */
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function findProjectsByIds(db: Db, ids: readonly number[]): Promise<ProjectRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('projects').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}

/** Narrows a projects query (project.finder.ts) to given ids (GraphQL `projects(ids:)`). */
export function restrictProjects<Q extends SelectQueryBuilder<DB, 'projects', ProjectRow>>(qb: Q, ids: number[] | undefined): Q {
  if (!ids) return qb;
  const q: SelectQueryBuilder<DB, 'projects', ProjectRow> = ids.length === 0 ? qb.where(sql<boolean>`1 = 0`) : qb.where(
    'projects.id', 'in', ids,
  );
  return q as Q;
}
