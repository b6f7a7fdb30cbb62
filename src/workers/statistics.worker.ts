/** Project statistics refreshes and repository housekeeping (domain/statistics, domain/housekeeping). */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { REFRESH_STATISTICS_JOB, refreshProjectStatistics } from '../domain/statistics/project-statistics.ts';
import { HOUSEKEEPING_JOB, runHousekeeping } from '../domain/housekeeping/housekeeping.ts';

export function registerStatisticsJobs(queue: JobQueue, deps: { db: Kysely<DB>; shards: StorageShard[] }): void {
  queue.registerHandler(REFRESH_STATISTICS_JOB, (p: { projectId: number }) => refreshProjectStatistics(deps.db, deps.shards, p.projectId), {
    maxAttempts: 3,
  });
  // Retried with the queue's backoff while a storage move keeps the repository read-only.
  queue.registerHandler(
    HOUSEKEEPING_JOB,
    (p: { projectId: number }, ctx) => runHousekeeping(deps.db, deps.shards, p.projectId, ctx.signal),
    { maxAttempts: 10 },
  );
}
