/**
 * A job's artifacts after upload: keeping them past their expiry, deleting them (one job's, or a
 * whole project's), and removing them once expired. Rows go in one transaction, files after the
 * commit, so a reader never finds a row whose file is already gone (a file left behind by a crash
 * is removed again by the next run, every step being idempotent).
 *
 * Expiry (the Service's Ci::JobArtifacts::DestroyAllExpiredService): each upload with an
 * expire_at queues a background job due at that moment (`ARTIFACTS_EXPIRE_JOB`). When it runs it
 * removes the artifacts whose expire_at has passed; kept artifacts have none by then, and a job
 * that is erased or deleted first leaves it nothing to do.
 */
import path from 'node:path';
import type { BuildRow, JobArtifactRow } from '../../db/tables/ci.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { nowIso } from '../clock.ts';
import {
  clearArtifactsExpiry, deleteArtifactRows, expiredArtifactsOfJob, jobArtifacts, projectArtifactsBatch,
  updateJob,
} from './jobs.queries.ts';
import { removeDir, removeFile } from './job-files.ts';

export const ARTIFACTS_EXPIRE_JOB = 'ci_artifacts_expire';
export const PROJECT_ARTIFACTS_DELETE_JOB = 'ci_project_artifacts_delete';

/** Files of removed rows, then the job's artifact folder once it is empty. */
async function removeArtifactFiles(env: CiEnv, rows: JobArtifactRow[]): Promise<void> {
  for (const row of rows) await removeFile(path.join(env.dataDir, row.file_path));
}

async function removeRows(env: CiEnv, rows: JobArtifactRow[], clearJobExpiry: boolean): Promise<void> {
  if (rows.length === 0) return;
  await env.db.transaction().execute(async (trx) => {
    await deleteArtifactRows(trx, rows.map((r) => r.id));
    if (clearJobExpiry) {
      for (const jobId of new Set(rows.map((r) => r.job_id))) await updateJob(trx, jobId, { artifacts_expire_at: null });
    }
  });
  await removeArtifactFiles(env, rows);
}

/**
 * Deletes a job's artifacts (archive, metadata, reports; the log stays: the Service's
 * erase_erasable_artifacts!). Returns how many artifacts were removed. Callers check that the
 * user may (`destroy_artifacts`, maintainers) before calling.
 */
export async function deleteJobArtifacts(env: CiEnv, job: BuildRow): Promise<number> {
  const rows = await jobArtifacts(env.db, [job.id]);
  await removeRows(env, rows, true);
  if (rows.length > 0) await removeDir(path.dirname(path.join(env.dataDir, rows[0].file_path))).catch(() => undefined);
  return rows.length;
}

/** Keeps a job's artifacts: they no longer expire (the Service's keep_artifacts!). */
export async function keepJobArtifacts(env: CiEnv, job: BuildRow): Promise<void> {
  await clearArtifactsExpiry(env.db, job.id);
}

export function hasArtifacts(rows: JobArtifactRow[]): boolean {
  return rows.some((r) => r.file_type === 'archive');
}

/** Whether an artifact may still be served: present and not past its expiry. */
export function isLive(row: JobArtifactRow | undefined, now: string = nowIso()): row is JobArtifactRow {
  return row !== undefined && (row.expire_at === null || row.expire_at > now);
}

/** The background job: removes the job's expired artifacts. Returns how many it removed. */
export async function removeExpiredArtifacts(env: CiEnv, jobId: number, now: string = nowIso()): Promise<number> {
  const rows = await expiredArtifactsOfJob(env.db, jobId, now);
  // The job keeps artifacts_expire_at, as the Service's job shows when its artifacts expired.
  await removeRows(env, rows, false);
  return rows.length;
}

/**
 * The background job behind DELETE /projects/:id/artifacts: every artifact of the project
 * uploaded before the request (`before`), in batches. Returns how many it removed.
 */
export async function deleteProjectArtifacts(env: CiEnv, projectId: number, before: string): Promise<number> {
  let removed = 0;
  for (let afterId = 0; ;) {
    const batch = await projectArtifactsBatch(env.db, projectId, before, afterId, 200);
    await removeRows(env, batch, true);
    removed += batch.length;
    if (batch.length < 200) break;
    afterId = batch[batch.length - 1].id;
  }
  return removed;
}

/**
 * What reading a job's artifacts takes beyond read_build, from its `artifacts:access` (after
 * 15.2; `public: false` is `developer`): nothing for `all` (or none given), update_build for
 * `developer`, admin_build for `maintainer`, and `none` lets no reader have them. The API's
 * artifact routes and the artifact pages both ask this.
 */
export function artifactsReadAbility(job: Pick<BuildRow, 'options'>): 'update_build' | 'admin_build' | 'none' | null {
  const access = (JSON.parse(job.options) as { artifacts?: { access?: string } | null }).artifacts?.access;
  if (access === undefined || access === 'all') return null;
  if (access === 'none') return 'none';
  return access === 'developer' ? 'update_build' : 'admin_build';
}
