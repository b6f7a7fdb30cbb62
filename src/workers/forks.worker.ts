/** The fork job: makes a fork's repository outside the request that forked (domain/forks/fork-project.ts). */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import {
  createForkRepository, FORK_REPOSITORY_JOB, forkRepositoryGaveUp, type ForkPayload,
} from '../domain/forks/fork-project.ts';

export function registerForkJobs(queue: JobQueue, deps: { db: Kysely<DB>; shards: StorageShard[] }): void {
  queue.registerHandler(FORK_REPOSITORY_JOB, (p: ForkPayload) => createForkRepository(deps.db, deps.shards, p), {
    maxAttempts: 3, onGiveUp: (p: ForkPayload, lastError: string) => forkRepositoryGaveUp(deps.db, p, lastError),
  });
}
