/** The Kysely calls of pipeline-wide actions (pipeline-actions.ts): retry clones, child pipelines, removal. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import { deploymentForRetry } from '../deployments/deployment-sync.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Child pipelines (trigger: include:) of a pipeline's bridges, served by ci_pipelines_upstream_bridge. */
export function childPipelines(db: Db, pipelineId: number): Promise<PipelineRow[]> {
  return db.selectFrom('ci_pipelines').selectAll().where('source', '=', 'parent_pipeline')
    .where(
      'upstream_bridge_id', 'in',
      db.selectFrom('ci_builds').select('id').where('pipeline_id', '=', pipelineId).where('type', '=', 'bridge'),
    )
    .execute();
}

/**
 * Marks `job` retried if it still is the latest try in the state it was read in, and inserts its
 * clone as `created` for the engine to weigh again. Null when another writer got there first.
 */
export async function cloneForRetry(trx: Transaction<DB>, job: BuildRow, userId: number, now: string): Promise<BuildRow | null> {
  const marked = await trx.updateTable('ci_builds').set({ retried: 1, updated_at: now })
    .where('id', '=', job.id).where('retried', '=', 0).where('status', '=', job.status).executeTakeFirst();
  if (Number(marked.numUpdatedRows) !== 1) return null;
  const { id: _id, ...rest } = job;
  const clone = await trx.insertInto('ci_builds').values({
    ...rest, status: 'created', user_id: userId, runner_id: null, token_digest: null, failure_reason: null, retried: 0,
    trace_size: 0, created_at: now, updated_at: now, queued_at: null, started_at: null, finished_at: null, erased_at: null,
    artifacts_expire_at: null,
  }).returningAll().executeTakeFirstOrThrow();
  // A retried deploying job deploys again, with a deployment of its own.
  await deploymentForRetry(trx, job.id, clone);
  return clone;
}

/** The latest skipped jobs become created again, so the engine decides anew whether they run. */
export async function resetSkippedJobs(trx: Transaction<DB>, pipelineId: number, now: string): Promise<void> {
  await trx.updateTable('ci_builds').set({ status: 'created', updated_at: now })
    .where('pipeline_id', '=', pipelineId).where('retried', '=', 0).where('status', '=', 'skipped').execute();
}

export function pipelineJobFiles(db: Db, pipelineId: number): Promise<{ id: number; project_id: number }[]> {
  return db.selectFrom('ci_builds').select(['id', 'project_id']).where('pipeline_id', '=', pipelineId).execute();
}

/** Removes a pipeline with its jobs, their artifact rows and its variables (cascades). */
export async function deletePipelineRows(trx: Transaction<DB>, pipeline: PipelineRow): Promise<boolean> {
  // The upstream bridge no longer points at a pipeline that is gone.
  if (pipeline.upstream_bridge_id !== null) {
    await trx.updateTable('ci_builds').set({ downstream_pipeline_id: null })
      .where('id', '=', pipeline.upstream_bridge_id).where('downstream_pipeline_id', '=', pipeline.id).execute();
  }
  await trx.deleteFrom('ci_builds').where('pipeline_id', '=', pipeline.id).execute();
  const r = await trx.deleteFrom('ci_pipelines').where('id', '=', pipeline.id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** The newest pipeline of `ref` at `sha` (served by ci_pipelines_project_ref). */
export function newestPipelineAt(db: Db, projectId: number, ref: string, sha: string): Promise<PipelineRow | undefined> {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('ref', '=', ref)
    .where('sha', '=', sha).orderBy('id', 'desc').limit(1).executeTakeFirst();
}
