/**
 * Pruning of webhook delivery logs past the Service's retention (domain/web-hooks/web-hook-logs.ts):
 * hourly on every node; each run deletes in batches, so several nodes at once only share the work.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import { pruneWebHookLogs } from '../domain/web-hooks/web-hook-logs.ts';
import { IntervalTask } from './interval-task.ts';

export const WEB_HOOK_LOGS_PRUNE_INTERVAL_S = 3600;

export class WebHookLogsPruner extends IntervalTask {
  constructor(db: Kysely<DB>, log: { error(obj: object, msg: string): void }) {
    super(() => pruneWebHookLogs(db), WEB_HOOK_LOGS_PRUNE_INTERVAL_S, log, 'web hook logs pruning failed');
  }
}
