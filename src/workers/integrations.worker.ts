/** Integration jobs (domain/integrations): what an active integration does after a push. */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { sealerFor } from '../domain/ci-variables/encryption.ts';
import { INTEGRATION_ATTEMPTS, INTEGRATION_JOB, type IntegrationJob } from '../domain/integrations/push-integrations.ts';
import { runIntegrationJob } from '../domain/integrations/run-integration.ts';

export function registerIntegrationJobs(
  queue: JobQueue,
  deps: {
    db: Kysely<DB>; dataDir: string; externalUrl: string; storages: StorageShard[];
    smtpUrl: string | null; smtpFrom: string; asanaApiUrl: string;
  },
): void {
  const run = { ...deps, sealer: () => sealerFor(deps.dataDir) };
  queue.registerHandler(INTEGRATION_JOB, (job: IntegrationJob) => runIntegrationJob(run, job), { maxAttempts: INTEGRATION_ATTEMPTS });
}
