/** Every Kysely call about job (build and bridge) rows and their artifacts. */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely, SelectQueryBuilder, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import { ByIds, QueryShape } from '../../db/query-shape.ts';
import type { BuildRow, CiBuildsTable, JobArtifactRow } from '../../db/tables/ci.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { transition, type JobEvent } from './state-machine.ts';
import { jobChanged } from '../deployments/deployment-sync.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type JobType = 'build' | 'bridge';

export function findJob(db: Db, id: number): Promise<BuildRow | undefined> {
  return db.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findJobInProject(db: Db, projectId: number, id: number, type?: JobType): Promise<BuildRow | undefined> {
  if (!isStorableId(id)) return undefined;
  let q = db.selectFrom('ci_builds').selectAll().where('project_id', '=', projectId).where('id', '=', id);
  // Without a type, builds and bridges (the Service's processables): an external status is no job.
  q = type ? q.where('type', '=', type) : q.where('type', 'in', ['build', 'bridge']);
  return q.executeTakeFirst();
}

export function findRunningJobByTokenDigest(db: Db, tokenDigest: string): Promise<BuildRow | undefined> {
  return db.selectFrom('ci_builds').selectAll().where('token_digest', '=', tokenDigest).where('status', '=', 'running').executeTakeFirst();
}

export function findJobByTokenDigest(db: Db, tokenDigest: string): Promise<BuildRow | undefined> {
  return db.selectFrom('ci_builds').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

/** The jobs of a pipeline the engine works with: the latest try of each. */
export function latestPipelineJobs(db: Db, pipelineId: number): Promise<BuildRow[]> {
  return db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).where('retried', '=', 0)
    .orderBy('stage_idx').orderBy('id').execute();
}

/** GET /projects/:id/jobs: builds only, newest first, served by (project_id, type[, status], id). */
/** Where a project's jobs list starts, selecting nothing (its shape adds the filters). */
export type ProjectJobsFrom = SelectQueryBuilder<DB, 'ci_builds', object>;

/**
 * GET /projects/:id/jobs as a shape compiled once (db/query-shape.ts): the project's builds, with
 * `scope` statuses, newest first. Served by ci_builds_project_type_id and
 * ci_builds_project_type_status (project_id, type, status, id).
 */
export function projectJobsShape(projectId: number, scope: string[] | undefined): QueryShape<ProjectJobsFrom> {
  const shape = new QueryShape<ProjectJobsFrom>();
  const project = shape.arg(projectId);
  shape.step('project', (qb) => qb.where('project_id', '=', project).where('type', '=', 'build'));
  if (scope && scope.length > 0) {
    const statuses = scope.map((s) => shape.arg(s));
    shape.step(`scope:${statuses.length}`, (qb) => qb.where('status', 'in', statuses));
  }
  shape.order('newest', (qb) => qb.orderBy('id', 'desc'));
  return shape;
}

export function projectJobsQuery(db: Db, projectId: number, scope: string[] | undefined) {
  let q = db.selectFrom('ci_builds').selectAll().where('project_id', '=', projectId).where('type', '=', 'build');
  if (scope && scope.length > 0) q = q.where('status', 'in', scope);
  return q.orderBy('id', 'desc');
}

export function pipelineJobsQuery(db: Db, pipelineId: number, type: JobType, scope: string[] | undefined, includeRetried: boolean) {
  let q = db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).where('type', '=', type);
  if (!includeRetried) q = q.where('retried', '=', 0);
  if (scope && scope.length > 0) q = q.where('status', 'in', scope);
  return q.orderBy('id', 'desc');
}

/**
 * Applies `event` if the job is still in the state it was read in: `UPDATE … WHERE status = <from>`.
 * Returns the updated row, or null when the event does not apply or another writer got there first.
 */
export async function applyJobEvent(
  db: Db, job: BuildRow, event: JobEvent, set: Omit<Updateable<CiBuildsTable>, 'id' | 'status'> = {},
): Promise<BuildRow | null> {
  const to = transition(job.status, event);
  if (to === null) return null;
  const row = await db.updateTable('ci_builds').set({ ...set, status: to, updated_at: nowIso() })
    .where('id', '=', job.id).where('status', '=', job.status)
    .returningAll().executeTakeFirst();
  // A deploying job's deployment and a stop job's environment follow the job (deployment-sync.ts).
  if (row) await jobChanged(db, row);
  // Every transition of a job a runner runs reaches the job webhooks (Ci::Build's after_transition → BuildHooksWorker).
  if (row && row.type === 'build') {
    await queueObjectHook(db, { kind: 'job', id: row.id, projectId: row.project_id, status: row.status, userId: row.user_id ?? undefined });
  }
  return row ?? null;
}

export async function updateJob(db: Db, id: number, set: Omit<Updateable<CiBuildsTable>, 'id' | 'status'>): Promise<void> {
  await db.updateTable('ci_builds').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute();
}

/** Pending builds in queue order after `afterId`, for a runner to choose from. */
export function pendingBuilds(db: Db, afterId: number, limit: number): Promise<BuildRow[]> {
  return db.selectFrom('ci_builds').selectAll().where('status', '=', 'pending').where('type', '=', 'build')
    .where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/**
 * Moves the log's end from `start` to `end` if it is still at `start` and the job still runs, so
 * two appends can never both claim the same range.
 */
export async function reserveTraceRange(db: Db, id: number, start: number, end: number): Promise<boolean> {
  const r = await db.updateTable('ci_builds').set({ trace_size: end }).where('id', '=', id)
    .where('trace_size', '=', start).where('status', '=', 'running').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function setTraceSizeFrom(db: Db, id: number, expected: number, actual: number): Promise<void> {
  await db.updateTable('ci_builds').set({ trace_size: actual }).where('id', '=', id).where('trace_size', '=', expected).execute();
}

/** Running builds after `afterId`, in id order (the sweeper walks them in batches). */
export function runningBuilds(db: Db, afterId: number, limit: number): Promise<BuildRow[]> {
  return db.selectFrom('ci_builds').selectAll().where('status', '=', 'running').where('type', '=', 'build')
    .where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

export function pendingJobsQueuedBefore(db: Db, before: string, limit: number): Promise<BuildRow[]> {
  return db.selectFrom('ci_builds').selectAll().where('status', '=', 'pending').where('type', '=', 'build')
    .where('queued_at', '<', before).orderBy('id').limit(limit).execute();
}

export const artifactsByJobIds = new ByIds(
  (db, ids) => db.selectFrom('ci_job_artifacts').selectAll().where('job_id', 'in', ids).orderBy('id'),
);

/** Rows of artifactsByJobIds in id order: each statement orders its own, and a long list runs in several. */
export function inArtifactOrder(rows: JobArtifactRow[]): JobArtifactRow[] {
  return rows.sort((a, b) => a.id - b.id);
}

/** The artifacts of the jobs, in id order within each job. */
export async function jobArtifacts(db: Db, jobIds: number[]): Promise<JobArtifactRow[]> {
  return inArtifactOrder(await artifactsByJobIds.all(db as Kysely<DB>, jobIds));
}

export function findArtifact(db: Db, jobId: number, fileType: string): Promise<JobArtifactRow | undefined> {
  return db.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId).where('file_type', '=', fileType).executeTakeFirst();
}

export async function insertArtifact(db: Db, a: Omit<JobArtifactRow, 'id' | 'created_at'>): Promise<JobArtifactRow> {
  return db.insertInto('ci_job_artifacts').values({ ...a, created_at: nowIso() }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteArtifactsOf(db: Db, jobId: number): Promise<void> {
  await db.deleteFrom('ci_job_artifacts').where('job_id', '=', jobId).execute();
}

/** The build named `name` of the latest successful pipeline of `ref` (the Service's latest_successful_build_for_ref). */
export async function latestSuccessfulBuildForRef(db: Db, projectId: number, ref: string, name: string): Promise<BuildRow | undefined> {
  const pipeline = await db.selectFrom('ci_pipelines').select('id')
    .where('project_id', '=', projectId).where('ref', '=', ref).where('status', '=', 'success')
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (!pipeline) return undefined;
  return db.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipeline.id).where('type', '=', 'build')
    .where('name', '=', name).where('retried', '=', 0).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** Keeps a job's artifacts past their expiry: no expire_at on them or on the job. */
export async function clearArtifactsExpiry(db: Db, jobId: number): Promise<void> {
  await db.updateTable('ci_job_artifacts').set({ expire_at: null }).where('job_id', '=', jobId).execute();
  await updateJob(db, jobId, { artifacts_expire_at: null });
}

/** A job's artifacts whose expire_at has passed. */
export function expiredArtifactsOfJob(db: Db, jobId: number, now: string): Promise<JobArtifactRow[]> {
  return db.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId)
    .where('expire_at', 'is not', null).where('expire_at', '<=', now).execute();
}

export async function deleteArtifactRows(db: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('ci_job_artifacts').where('id', 'in', ids).execute();
}

/** A project's artifacts created before `before`, in id order after `afterId` (index project_id, id). */
export function projectArtifactsBatch(
  db: Db, projectId: number, before: string, afterId: number, limit: number,
): Promise<JobArtifactRow[]> {
  return db.selectFrom('ci_job_artifacts').selectAll().where('project_id', '=', projectId).where('id', '>', afterId)
    .where('created_at', '<', before).orderBy('id').limit(limit).execute();
}

/** What the pipelines page shows of each pipeline's jobs: the latest try of each, by stage. */
export function pipelineJobSummaries(db: Db, pipelineIds: number[]) {
  if (pipelineIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('ci_builds').select(['id', 'pipeline_id', 'name', 'stage', 'stage_idx', 'status', 'allow_failure'])
    .where('pipeline_id', 'in', pipelineIds).where('retried', '=', 0).orderBy('pipeline_id').orderBy('stage_idx').orderBy('id')
    .execute();
}
