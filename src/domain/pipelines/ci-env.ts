/** What the pipeline engine needs besides the database: where repositories and CI files live, and limits. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';

export interface CiEnv {
  db: Kysely<DB>;
  storages: StorageShard[];
  /** KILN_DATA_DIR: job logs and artifacts live under `ci/` there. */
  dataDir: string;
  /** Seconds a job may run unless it says otherwise (KILN_CI_JOB_TIMEOUT). */
  jobTimeout: number;
  /** Seconds a job may wait for a runner before it is failed as stuck (KILN_CI_PENDING_TIMEOUT). */
  pendingTimeout: number;
}

export function ciEnvFrom(db: Kysely<DB>, config: { storages: StorageShard[]; dataDir: string; ciJobTimeout: number; ciPendingTimeout: number }): CiEnv {
  return { db, storages: config.storages, dataDir: config.dataDir, jobTimeout: config.ciJobTimeout, pendingTimeout: config.ciPendingTimeout };
}
