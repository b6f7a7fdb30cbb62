/** Every Kysely call of the badges area. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BadgeRow } from '../../db/tables/badges.ts';
import { param, prepared } from '../../db/prepared.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Whose badges: a group's own, or a project's with those of its group and the group's ancestors (Project#badges). */
export interface BadgeHolder {
  projectId?: number;
  groupIds: number[];
}

/** The holder's badges in created_at order (Badge's default scope), a name's only when given (with_name). */
export function badgesQuery(db: Db, holder: BadgeHolder, name?: string) {
  let q = db.selectFrom('badges').selectAll().where((eb) => {
    const parts = [];
    if (holder.projectId !== undefined) parts.push(eb('project_id', '=', holder.projectId));
    if (holder.groupIds.length > 0) parts.push(eb('group_id', 'in', holder.groupIds));
    return eb.or(parts);
  });
  if (name !== undefined) q = q.where('name', '=', name);
  return q.orderBy('created_at').orderBy('id');
}

export function findHeldBadge(db: Db, holder: BadgeHolder, id: number): Promise<BadgeRow | undefined> {
  return badgesQuery(db, holder).where('id', '=', id).executeTakeFirst();
}

/** A badge row before the database gives it an id. */
export type NewBadge = Omit<BadgeRow, 'id'>;

export function insertBadge(db: Db, b: NewBadge): Promise<BadgeRow> {
  return db.insertInto('badges').values(b).returningAll().executeTakeFirstOrThrow();
}

export function updateBadge(
  db: Db, id: number, values: { link_url?: string; image_url?: string; name?: string | null; updated_at: string },
): Promise<BadgeRow | undefined> {
  return db.updateTable('badges').set(values).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteBadge(db: Db, id: number): Promise<void> {
  await db.deleteFrom('badges').where('id', '=', id).execute();
}

// The badge images (/<project>/badges/<ref>/pipeline.svg and coverage.svg) are fetched by every
// page view of a README that embeds them: their reads are compiled once and walk the
// (project_id, ref, id) index of ci_pipelines and the (pipeline_id, id) index of ci_builds.

/** The status of a ref's newest pipeline (Ci::Badge::Pipeline::Status#status). */
const newestPipelineStatus = prepared((db) => db.selectFrom('ci_pipelines').select('status')
  .where('project_id', '=', param<number>(0)).where('ref', '=', param<string>(1))
  .orderBy('id', 'desc').limit(1));

/** The same, passing over skipped pipelines (`ignore_skipped=true`). */
const newestUnskippedPipelineStatus = prepared((db) => db.selectFrom('ci_pipelines').select('status')
  .where('project_id', '=', param<number>(0)).where('ref', '=', param<string>(1)).where('status', '<>', 'skipped')
  .orderBy('id', 'desc').limit(1));

export async function newestPipelineStatusForRef(
  db: Kysely<DB>, projectId: number, ref: string, ignoreSkipped: boolean,
): Promise<string | undefined> {
  const row = await (ignoreSkipped ? newestUnskippedPipelineStatus : newestPipelineStatus).first(db, [projectId, ref]);
  return row?.status;
}

/** A ref's newest pipeline in one status (latest_successful_for_ref and its siblings). */
const newestPipelineInStatus = prepared((db) => db.selectFrom('ci_pipelines').select('id')
  .where('project_id', '=', param<number>(0)).where('ref', '=', param<string>(1)).where('status', '=', param<string>(2))
  .orderBy('id', 'desc').limit(1));

export async function newestPipelineIdInStatus(
  db: Kysely<DB>, projectId: number, ref: string, status: string,
): Promise<number | undefined> {
  return (await newestPipelineInStatus.first(db, [projectId, ref, status]))?.id;
}

/** Coverage its latest jobs and external statuses reported (Ci::Pipeline#coverage averages them). */
const pipelineCoverages = prepared((db) => db.selectFrom('ci_builds').select('coverage')
  .where('pipeline_id', '=', param<number>(0)).where('retried', '=', 0).where('coverage', 'is not', null));

export async function pipelineCoverageValues(db: Kysely<DB>, pipelineId: number): Promise<number[]> {
  return (await pipelineCoverages.all(db, [pipelineId])).map((r) => Number(r.coverage));
}

/**
 * The newest successful, not retried job of that name on the ref among three pipelines (the
 * Service's Ci::Build.in_pipelines(...).latest.success.for_ref(ref).by_name(job).max_by(&:created_at));
 * 0 stands for a pipeline that does not exist. Only the pipelines and the name are asked of the
 * database, so it walks ci_builds_pipeline: with status and type in the WHERE clause SQLite
 * preferred ci_builds_queue (status, type) and read every successful job there is (27 ms on the
 * bench's 100,000 jobs against 0.02 ms). The few runs of one job are sorted out here.
 */
const jobRuns = prepared((db) => db.selectFrom('ci_builds').select(['id', 'type', 'status', 'retried', 'ref', 'coverage', 'created_at'])
  .where('pipeline_id', 'in', [param<number>(0), param<number>(1), param<number>(2)]).where('name', '=', param<string>(3)));

export async function newestSuccessfulJobCoverage(
  db: Kysely<DB>, pipelineIds: readonly [number, number, number], ref: string, name: string,
): Promise<{ coverage: number | null } | undefined> {
  let newest: { id: number; created_at: string; coverage: number | null } | undefined;
  for (const run of await jobRuns.all(db, [...pipelineIds, name])) {
    if (run.type !== 'build' || Number(run.retried) !== 0 || run.status !== 'success' || run.ref !== ref) continue;
    if (!newest || run.created_at > newest.created_at || (run.created_at === newest.created_at && run.id > newest.id)) newest = run;
  }
  return newest ? { coverage: newest.coverage === null ? null : Number(newest.coverage) } : undefined;
}
