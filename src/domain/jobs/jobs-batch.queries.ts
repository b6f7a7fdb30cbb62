/**
 * Jobs of many pipelines in one query, for the GraphQL API's lists (a page of pipelines with
 * their jobs costs one query for the jobs, whatever the page size: issue 18, item 5).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BuildRow } from '../../db/tables/ci.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Served by the (pipeline_id, …) index of ci_builds. */
export async function jobsOfPipelines(db: Db, pipelineIds: readonly number[], opts: { includeRetried: boolean }): Promise<BuildRow[]> {
  if (pipelineIds.length === 0) return [];
  let q = db.selectFrom('ci_builds').selectAll().where('pipeline_id', 'in', [...new Set(pipelineIds)]);
  if (!opts.includeRetried) q = q.where('retried', '=', 0);
  return q.orderBy('pipeline_id').orderBy('id').execute();
}

export async function findJobsByIds(db: Db, ids: readonly number[]): Promise<BuildRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('ci_builds').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}
