/**
 * Every Kysely call about commit statuses (GET …/commits/:sha/statuses, POST /statuses/:sha): the
 * jobs of a commit's pipelines, of every kind (the Service's CommitStatus: builds, bridges and
 * external statuses), and an external status's own rows.
 */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BuildRow, CiBuildsTable, PipelineRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import type { NewJob } from './pipelines.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export interface StatusFilters {
  ref?: string;
  stage?: string;
  name?: string;
  /** Retried jobs too (`all`); otherwise only the latest of each name. */
  all: boolean;
}

/**
 * The statuses of the project's pipelines whose commit is `sha` as given (the Service compares
 * the text, so a branch name finds none), oldest first: ci_pipelines_project_sha, then
 * ci_builds_pipeline for each pipeline.
 */
export function commitStatusesQuery(db: Db, projectId: number, sha: string, f: StatusFilters) {
  let q = db.selectFrom('ci_builds').innerJoin('ci_pipelines', 'ci_pipelines.id', 'ci_builds.pipeline_id')
    .selectAll('ci_builds').select('ci_pipelines.sha as pipeline_sha')
    .where('ci_pipelines.project_id', '=', projectId).where('ci_pipelines.sha', '=', sha);
  if (!f.all) q = q.where('ci_builds.retried', '=', 0);
  if (f.ref) q = q.where('ci_builds.ref', '=', f.ref);
  if (f.stage) q = q.where('ci_builds.stage', '=', f.stage);
  if (f.name) q = q.where('ci_builds.name', '=', f.name);
  return q.orderBy('ci_builds.id');
}

/** The newest pipeline of the commit, of `ref` and with id `pipelineId` when given (all_matching_pipelines.first). */
export function newestCommitPipeline(
  db: Db, projectId: number, sha: string, o: { ref?: string; pipelineId?: number },
): Promise<PipelineRow | undefined> {
  let q = db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('sha', '=', sha);
  if (o.ref !== undefined) q = q.where('ref', '=', o.ref);
  if (o.pipelineId !== undefined) q = q.where('id', '=', o.pipelineId);
  return q.orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** The caller's external status of that name and ref in the pipeline that is still open (GenericCommitStatus.running_or_pending). */
export function openGenericStatus(trx: Db, pipelineId: number, name: string, ref: string, userId: number): Promise<BuildRow | undefined> {
  return trx.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).where('type', '=', 'generic')
    .where('name', '=', name).where('ref', '=', ref).where('user_id', '=', userId).where('status', 'in', ['pending', 'running'])
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export function insertGenericStatus(trx: Db, job: NewJob & { pipeline_id: number }): Promise<BuildRow> {
  const now = nowIso();
  return trx.insertInto('ci_builds').values({ ...job, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

/** Writes `set` if the status is still `from` (two reports at once cannot both move it); null otherwise. */
export async function moveGenericStatus(
  trx: Db, id: number, from: string, set: Omit<Updateable<CiBuildsTable>, 'id'>,
): Promise<BuildRow | null> {
  const row = await trx.updateTable('ci_builds').set({ ...set, updated_at: nowIso() })
    .where('id', '=', id).where('status', '=', from).returningAll().executeTakeFirst();
  return row ?? null;
}

/** Older statuses of that name in the pipeline become retried (CommitStatus#update_older_statuses_retried!). */
export async function retryOlderStatuses(trx: Db, pipelineId: number, name: string, keepId: number): Promise<void> {
  await trx.updateTable('ci_builds').set({ retried: 1 })
    .where('pipeline_id', '=', pipelineId).where('name', '=', name).where('retried', '=', 0).where('id', '!=', keepId).execute();
}
