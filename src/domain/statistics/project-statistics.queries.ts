/** Every Kysely call of project statistics, daily fetch counts and housekeeping leases. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectStatisticsRow, ProjectStatisticsTable } from '../../db/tables/project-statistics.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function statisticsOf(db: Db, projectIds: number[]): Promise<Map<number, ProjectStatisticsRow>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db.selectFrom('project_statistics').selectAll().where('project_id', 'in', projectIds).execute();
  return new Map(rows.map((r) => [r.project_id, r]));
}

export async function saveStatistics(db: Db, row: Omit<ProjectStatisticsTable, 'updated_at'>): Promise<void> {
  const values = { ...row, updated_at: nowIso() };
  const { project_id: _id, ...set } = values;
  await db.insertInto('project_statistics').values(values).onConflict((oc) => oc.column('project_id').doUpdateSet(set)).execute();
}

/** Whether a refresh of the project's statistics already waits in the queue. */
export async function refreshQueued(db: Db, kind: string, payload: string): Promise<boolean> {
  const row = await db.selectFrom('background_jobs').select('id')
    .where('state', '=', 'queued').where('kind', '=', kind).where('payload', '=', payload).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The project's sizes measured from the database: its job artifacts. */
export async function artifactsSize(db: Db, projectId: number): Promise<number> {
  const row = await db.selectFrom('ci_job_artifacts').select(sql<number | string | null>`sum(size)`.as('n'))
    .where('project_id', '=', projectId).executeTakeFirstOrThrow();
  return Number(row.n ?? 0);
}

export function projectSnippetRepositories(db: Db, projectId: number) {
  return db.selectFrom('snippets').select(['repository_storage', 'disk_path']).where('project_id', '=', projectId).execute();
}

/** One more git fetch of the project today (ProjectDailyStatisticsService). */
export async function countFetch(db: Db, projectId: number, date: string): Promise<void> {
  await db.insertInto('project_daily_statistics').values({ project_id: projectId, date, fetch_count: 1 })
    .onConflict((oc) => oc.columns(['project_id', 'date'])
      .doUpdateSet((eb) => ({ fetch_count: eb('project_daily_statistics.fetch_count', '+', 1) })))
    .execute();
}

/** The days since `fromDate` with fetches, newest first. */
export function dailyFetches(db: Db, projectId: number, fromDate: string) {
  return db.selectFrom('project_daily_statistics').select(['date', 'fetch_count'])
    .where('project_id', '=', projectId).where('date', '>=', fromDate).orderBy('date', 'desc').execute();
}

/**
 * Takes the project's housekeeping lease until `until` when it is free (never taken, or run
 * out), in one statement; false when someone holds it.
 */
export async function takeHousekeepingLease(db: Db, projectId: number, now: string, until: string): Promise<boolean> {
  const rows = await db.insertInto('project_housekeeping').values({ project_id: projectId, leased_until: until, last_run_at: null })
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ leased_until: until })
      .where('project_housekeeping.leased_until', '<=', now))
    .returning('project_id').execute();
  return rows.length === 1;
}

export async function recordHousekeepingRun(db: Db, projectId: number): Promise<void> {
  await db.updateTable('project_housekeeping').set({ last_run_at: nowIso() }).where('project_id', '=', projectId).execute();
}
