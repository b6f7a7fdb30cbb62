/**
 * Schedules a move for every repository of one kind on a source shard (the Service's
 * ScheduleBulkRepositoryShardMovesService, run by a worker after the API answered 202). It walks
 * the containers by id in pages, and schedules each as a single move would; a container that
 * cannot be scheduled (already moving, i.e. read-only) is skipped, so a second bulk request for
 * the same shard moves nothing twice. Re-running after a crash is safe for the same reason. A
 * container with a git push in progress is skipped too, as the Service skips a container whose
 * move fails to schedule; it stays on the source, writable, for a later request.
 */
import { containersOnStorage, type ContainerKind } from './storage-moves.queries.ts';
import { scheduleMove, type MoveDeps, type ShardChecks } from './schedule-move.ts';

export const SCHEDULE_BULK_JOB = 'storage_moves.schedule_bulk';

export interface BulkPayload {
  kind: ContainerKind;
  source: string;
  destination: string | null;
}

const PAGE = 100;

export async function scheduleBulkMoves(
  deps: MoveDeps, p: BulkPayload, signal: AbortSignal,
): Promise<{ scheduled: number; skipped: number }> {
  let scheduled = 0;
  let skipped = 0;
  let afterId = 0;
  const checks: ShardChecks = new Map();
  for (;;) {
    signal.throwIfAborted();
    const page = await containersOnStorage(deps.db, p.kind, p.source, afterId, PAGE);
    if (page.length === 0) break;
    for (const container of page) {
      if (container.read_only === 1) {
        skipped += 1;
        continue;
      }
      const result = await scheduleMove(deps, p.kind, container, p.destination ?? undefined, checks);
      if (result.ok) scheduled += 1;
      else skipped += 1;
    }
    afterId = page[page.length - 1].id;
  }
  return { scheduled, skipped };
}
