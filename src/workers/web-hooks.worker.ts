/** Webhook deliveries (domain/web-hooks): one job per hook and event, retried with back-off. */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { StorageShard } from '../config/schema.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { sealerFor } from '../domain/ci-variables/encryption.ts';
import { WEB_HOOK_ATTEMPTS, WEB_HOOK_JOB, type DeliveryJob } from '../domain/web-hooks/hook-events.ts';
import { runDeliveryJob } from '../domain/web-hooks/run-delivery.ts';
import { WEB_HOOK_BUILD_JOB, type ObjectHookEvent } from '../domain/web-hooks/object-hooks.ts';
import { buildObjectHook } from '../domain/web-hooks/build-object-hook.ts';

export function registerWebHookJobs(
  queue: JobQueue,
  deps: {
    db: Kysely<DB>; dataDir: string; externalUrl: string; sshPort: number; storages: StorageShard[];
    log: { warn(obj: object, msg: string): void };
  },
): void {
  const delivery = { db: deps.db, sealer: () => sealerFor(deps.dataDir), externalUrl: deps.externalUrl };
  queue.registerHandler(WEB_HOOK_JOB, async (job: DeliveryJob, ctx) => {
    const outcome = await runDeliveryJob(delivery, job, ctx.signal);
    // A refused address is not retried: only a change of the hook or of the setting would help.
    if (typeof outcome === 'object') deps.log.warn({ hookId: job.hookId, reason: outcome.blocked }, 'web hook delivery refused');
  }, { maxAttempts: WEB_HOOK_ATTEMPTS });
  // Record events: their payload is built once the write committed, then delivered as above.
  queue.registerHandler(WEB_HOOK_BUILD_JOB, (event: ObjectHookEvent) => buildObjectHook(
    { db: deps.db, externalUrl: deps.externalUrl, sshPort: deps.sshPort, storages: deps.storages }, event,
  ), { maxAttempts: 3 });
}
