/**
 * Git writes in progress (issue 7; the Service's per-repository reference counter and
 * `git_transfer_in_progress?`, reference §4). A push writes to its repository for as long as the
 * client sends, far too long to hold a database transaction; instead it leaves a record in
 * `repository_writes` for its whole run, which every server process sees:
 *
 * - `beginRepositoryWrite` locks the container's row (`lockContainers`), refuses a read-only
 *   container and records the write, in one transaction;
 * - scheduling a storage move marks the container read-only with a conditional UPDATE of the same
 *   row and then, still in its transaction, refuses when a write is in progress (`writeInProgress`,
 *   the Service's "Git transfer in progress"). The row lock orders the two: either the push's
 *   record has committed before the schedule reads the records, or the push finds the container
 *   read-only. So no push is writing while a move copies, verifies and switches the repository;
 * - the caller ends the write (`end()`) once the git processes have exited, whatever the outcome.
 *
 * A record whose process crashed is never ended; it stops counting at `expires_at`: the push's
 * time limit (the git layer ends a push that runs longer, KILN_GIT_PUSH_TIME_LIMIT) plus
 * WRITE_GRACE_MS. A record that still counts thus belongs to a push that may still be writing.
 *
 * API writes to a repository (a snippet commit, a new HEAD, a deletion) need no record: they lock
 * the row with `lockContainers` and write before their transaction ends, so a schedule waits for
 * them just as a push waits for a schedule.
 */
import os from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { lockContainers, type ContainerKind, type LockedContainer } from '../storage-moves/storage-moves.queries.ts';
import { deleteExpiredWrites, deleteWrite, insertWrite, unexpiredWriteExists } from './repository-writes.queries.ts';

/** The Service's error when a repository cannot be made read-only during a git transfer. */
export const GIT_TRANSFER_IN_PROGRESS = 'Git transfer in progress';

/**
 * How long a write's record outlives its time limit: time for the ended git processes to exit,
 * and for clocks of different servers to disagree.
 */
export const WRITE_GRACE_MS = 5 * 60_000;

const OWNER = `${os.hostname()}:${process.pid}`;

export type WriteStart =
  | { ok: true; container: LockedContainer; end(): Promise<void> }
  | { ok: false; reason: 'read_only' | 'not_found' };

/**
 * Records a write to the container's repository that may run for `timeLimitMs`, unless the
 * container is read-only (or gone). On success, write to the repository the answered row names
 * (its storage cannot change until `end()`), and call `end()` once every process writing to it
 * has exited. `end()` may be called more than once.
 */
export async function beginRepositoryWrite(
  db: Kysely<DB>, kind: ContainerKind, containerId: number, timeLimitMs: number,
): Promise<WriteStart> {
  const started = await db.transaction().execute(async (trx) => {
    const [locked] = await lockContainers(trx, kind, [containerId]);
    if (!locked) return { ok: false, reason: 'not_found' } as const;
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' } as const;
    const now = new Date();
    await deleteExpiredWrites(trx, kind, containerId, nowIso(now));
    const id = await insertWrite(trx, {
      kind, containerId, owner: OWNER,
      startedAt: nowIso(now), expiresAt: nowIso(new Date(now.getTime() + timeLimitMs + WRITE_GRACE_MS)),
    });
    return { ok: true, container: locked, id } as const;
  });
  if (!started.ok) return started;
  let ended: Promise<void> | null = null;
  return { ok: true, container: started.container, end: () => (ended ??= deleteWrite(db, started.id)) };
}

/**
 * Whether a write to the container is in progress. Called by a move's schedule after it locked
 * the row (see above); elsewhere only a hint.
 */
export function writeInProgress(db: Kysely<DB> | Transaction<DB>, kind: ContainerKind, containerId: number): Promise<boolean> {
  return unexpiredWriteExists(db, kind, containerId, nowIso());
}
