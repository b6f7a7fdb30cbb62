/**
 * The storage-move jobs (aesthetics §2: the Service's UpdateRepositoryStorageWorker and its bulk
 * scheduling worker). The job's lease is the exclusive claim on the move: while one worker holds
 * it no other runs the move, and when its worker dies the lease expires and the move resumes.
 * A move whose job is given up after repeated interruptions ends `failed`, its container usable.
 */
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import { RUN_MOVE_JOB, type MoveDeps } from '../domain/storage-moves/schedule-move.ts';
import { giveUpMove, runMove } from '../domain/storage-moves/run-move.ts';
import { SCHEDULE_BULK_JOB, scheduleBulkMoves, type BulkPayload } from '../domain/storage-moves/schedule-bulk-moves.ts';
import type { ContainerKind } from '../domain/storage-moves/storage-moves.queries.ts';

interface RunPayload {
  kind: ContainerKind;
  moveId: number;
}

export function registerStorageMoveJobs(queue: JobQueue, deps: MoveDeps): void {
  queue.registerHandler(RUN_MOVE_JOB, (p: RunPayload, ctx) => runMove(deps, p.kind, p.moveId, ctx), {
    maxAttempts: 5,
    onGiveUp: (p: RunPayload, lastError) => giveUpMove(deps, p.kind, p.moveId, lastError),
  });
  queue.registerHandler(SCHEDULE_BULK_JOB, async (p: BulkPayload, ctx) => {
    await scheduleBulkMoves(deps, p, ctx.signal);
  }, { maxAttempts: 5 });
}
