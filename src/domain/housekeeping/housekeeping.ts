/**
 * Repository housekeeping (the Service's Repositories::HousekeepingService behind POST
 * /projects/:id/housekeeping): a `git gc` of the project's repository in a background job, at
 * most once per project every 24 hours (its exclusive lease `project_housekeeping:<id>`,
 * LEASE_TIMEOUT), then the project's statistics refreshed.
 *
 * Never while a storage move runs, by the move's own mechanism (repository-writes.ts): the job
 * records a repository write for its whole run, which a move's schedule finds ("Git transfer in
 * progress") and refuses; and the write cannot start while a scheduled move keeps the project
 * read-only, so the job waits and retries until the move has finished.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { nowIso } from '../clock.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { beginRepositoryWrite } from '../repository-writes/repository-writes.ts';
import { repositoryExists } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { runGit } from '../repositories/git-command.ts';
import { refreshProjectStatistics } from '../statistics/project-statistics.ts';
import { recordHousekeepingRun, takeHousekeepingLease } from '../statistics/project-statistics.queries.ts';

export const HOUSEKEEPING_JOB = 'projects.housekeeping';
/** LEASE_TIMEOUT: 24 hours. */
export const HOUSEKEEPING_LEASE_MS = 86_400_000;
/** HousekeepingService::LeaseTaken#to_s (LEASE_TIMEOUT / 60 minutes). */
export const LEASE_TAKEN = `Somebody already triggered housekeeping for this resource in the past ${HOUSEKEEPING_LEASE_MS / 60_000} minutes`;
/** The longest a gc may run; also how long its repository write counts (repository-writes.ts). */
const GC_TIME_LIMIT_MS = 60 * 60_000;

/** Thrown to have the job retried later: a storage move holds the repository read-only. */
export class RepositoryBusy extends Error {}

/** Takes the lease and queues the job in one transaction; null when the lease is taken. */
export async function startHousekeeping(db: Kysely<DB>, projectId: number): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const now = new Date();
    if (!(await takeHousekeepingLease(trx, projectId, nowIso(now), nowIso(new Date(now.getTime() + HOUSEKEEPING_LEASE_MS))))) return null;
    return (await insertJob(trx, { kind: HOUSEKEEPING_JOB, payload: { projectId }, maxAttempts: 10 })).id;
  });
}

export async function runHousekeeping(db: Kysely<DB>, shards: StorageShard[], projectId: number, signal: AbortSignal): Promise<void> {
  const write = await beginRepositoryWrite(db, 'project', projectId, GC_TIME_LIMIT_MS);
  if (!write.ok) {
    if (write.reason === 'not_found') return; // the project is gone
    throw new RepositoryBusy('the repository is read-only for a storage move; housekeeping waits for it');
  }
  try {
    const project = await findProjectById(db, projectId);
    if (!project) return;
    // The storage the locked row named: it cannot change until the write ends.
    const gitDir = repositoryPath(shards, write.container.repository_storage, write.container.disk_path);
    signal.throwIfAborted();
    if (await repositoryExists(gitDir)) {
      // The eager task: repack everything into one pack, pack the refs, prune what git's
      // default grace period allows (objects a concurrent push just wrote stay).
      await runGit(['gc', '--quiet'], { gitDir });
    }
  } finally {
    await write.end();
  }
  await recordHousekeepingRun(db, projectId);
  await refreshProjectStatistics(db, shards, projectId);
}
