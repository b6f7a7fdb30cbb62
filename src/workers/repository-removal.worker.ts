/**
 * Removes repositories whose rows are gone (a group's deletion, src/domain/groups/delete-group.ts),
 * outside the request that deleted them.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { REMOVE_REPOSITORIES_JOB, removeRepositories, type RemoveRepositoriesPayload } from '../domain/groups/delete-group.ts';

export function registerRepositoryRemovalJobs(queue: JobQueue, deps: { db: Kysely<DB>; shards: StorageShard[] }): void {
  queue.registerHandler(
    REMOVE_REPOSITORIES_JOB,
    (p: RemoveRepositoriesPayload, ctx) => removeRepositories(deps.db, deps.shards, p, ctx.signal),
    { maxAttempts: 5 },
  );
}
