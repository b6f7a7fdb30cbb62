/** Pipeline look-ups the GraphQL API offers beyond REST: by per-project iid and by commit. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findPipelineByIid(db: Db, projectId: number, iid: number): Promise<PipelineRow | undefined> {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
}

/** The latest pipeline for a commit of the project. */
export function findLatestPipelineForSha(db: Db, projectId: number, sha: string): Promise<PipelineRow | undefined> {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('sha', '=', sha)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
}
