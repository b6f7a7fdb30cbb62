/** The job queue's table (migration 2026-11-22T1100_storage_moves; DESIGN, Stack: background work). */
import type { Generated, Selectable } from 'kysely';

export type JobState = 'queued' | 'running' | 'dead';

export interface BackgroundJobsTable {
  id: Generated<number>;
  kind: string;
  /** JSON text; what the handler of `kind` needs. */
  payload: string;
  state: Generated<JobState>;
  run_at: string;
  /** Claims so far, counting the current one. */
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}
export type BackgroundJobRow = Selectable<BackgroundJobsTable>;

declare module '../types.ts' {
  interface DB {
    background_jobs: BackgroundJobsTable;
  }
}

/** A process running job workers (migration 2026-11-29T0810_background_job_metrics). */
export interface BackgroundJobWorkersTable {
  /** JobRunner.owner: hostname, pid and a random tag. */
  owner: string;
  hostname: string;
  pid: number;
  concurrency: number;
  started_at: string;
  beat_at: string;
}

/** Running totals: `processed` (every finished or failed run) and `failed`. */
export interface BackgroundJobCountersTable {
  name: string;
  value: Generated<number | string>;
}

declare module '../types.ts' {
  interface DB {
    background_job_workers: BackgroundJobWorkersTable;
    background_job_counters: BackgroundJobCountersTable;
  }
}
