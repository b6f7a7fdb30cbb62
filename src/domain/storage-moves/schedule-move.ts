/**
 * Schedules one repository storage move (the Service's `schedule` event, reference §4): checks
 * the move as the Service validates it, then, in one transaction, marks the container read-only,
 * records the move in state `scheduled` and queues the job that will run it. The job row
 * commits with the move (no move without its job, no job without its move).
 *
 * Like the Service's `set_repository_read_only!`, marking the container read-only fails while a
 * git push to it is in progress (repository-writes.ts): such a push could still be writing when
 * the move copies, or land after the move's last check, and be lost with the source.
 *
 * Errors come back as the Service's model errors (`{"destination_storage_name": ["is not included
 * in the list"]}`, `{"project": ["is read-only"]}`, `{"project": ["Git transfer in progress"]}`),
 * which the API answers with 400.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { StorageMoveRow } from '../../db/tables/storage-moves.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { pickWeighted, storageWeights } from '../repositories/storage.ts';
import { checkShard, isSamePlace, type ShardCheck } from './shards.ts';
import { insertMove, markReadOnly, type Container, type ContainerKind } from './storage-moves.queries.ts';
import { MOVE_STATES, transition } from './state-machine.ts';
import { GIT_TRANSFER_IN_PROGRESS, writeInProgress } from '../repository-writes/repository-writes.ts';

export const RUN_MOVE_JOB = 'storage_moves.run';

export interface MoveDeps {
  db: Kysely<DB>;
  jobs: JobQueue;
  shards: StorageShard[];
  /** Test-only: pause this long after copying, before verifying (KILN_STORAGE_MOVE_TEST_DELAY_MS). */
  testDelayMs?: number;
}

/** Rolls the schedule's transaction back: a push to the container is under way. */
class TransferInProgress extends Error {}

export type ModelErrors = Record<string, string[]>;
export type ScheduleResult = { ok: true; move: StorageMoveRow } | { ok: false; errors: ModelErrors };

function shardError(check: ShardCheck & { ok: false }): string {
  return check.problem === 'not_configured' ? 'is not included in the list' : 'is not reachable';
}

/**
 * The destination when none is given: a weighted pick (the Service's pick_repository_storage)
 * among the shards that are not the source's directory; null when none has a weight.
 */
export async function pickDestination(deps: MoveDeps, source: ShardCheck & { ok: true }): Promise<string | null> {
  const candidates: StorageShard[] = [];
  for (const shard of deps.shards) {
    const check = await checkShard(deps.shards, shard.name);
    if (check.ok && !isSamePlace(check, source)) candidates.push(shard);
  }
  const picked = pickWeighted(candidates, await storageWeights(deps.db));
  return candidates.some((c) => c.name === picked) ? picked : null;
}

/**
 * Shard checks by name, shared by the many schedules of one bulk request: the shards do not
 * change between two containers, and each check costs a few file-system calls.
 */
export type ShardChecks = Map<string, Promise<ShardCheck>>;

function checkOnce(deps: MoveDeps, checks: ShardChecks | undefined, name: string): Promise<ShardCheck> {
  if (!checks) return checkShard(deps.shards, name);
  let check = checks.get(name);
  if (!check) checks.set(name, check = checkShard(deps.shards, name));
  return check;
}

export async function scheduleMove(
  deps: MoveDeps, kind: ContainerKind, container: Container, destinationName?: string, checks?: ShardChecks,
): Promise<ScheduleResult> {
  const errors: ModelErrors = {};
  const add = (field: string, message: string) => { (errors[field] ??= []).push(message); };
  const source = await checkOnce(deps, checks, container.repository_storage);
  if (!source.ok) add('source_storage_name', shardError(source));
  let destination = destinationName ?? null;
  if (destination !== null) {
    const check = await checkOnce(deps, checks, destination);
    if (!check.ok) add('destination_storage_name', shardError(check));
    // The same shard, or another name for the same directory: refused, never copied onto itself.
    else if (source.ok && isSamePlace(check, source)) add(
      'destination_storage_name',
      'must be a different storage than source_storage_name (both are the same directory)',
    );
  } else if (source.ok) {
    destination = await pickDestination(deps, source);
    if (destination === null) add('destination_storage_name', "can't be blank: no other reachable storage has a weight above 0");
  }
  if (container.read_only === 1) add(kind, 'is read-only');
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const scheduled = transition(MOVE_STATES.initial, 'schedule')!;
  try {
    const move = await deps.db.transaction().execute(async (trx) => {
      // The Service builds the move in `initial` and fires `schedule` at once; kiln writes the
      // result of that transition, with its side effect, in the same transaction.
      if (!(await markReadOnly(trx, kind, container.id, container.repository_storage))) return null;
      // The row is locked now: a push that recorded its write has committed the record, and
      // no other can start until this transaction ends (then it finds the container read-only).
      if (await writeInProgress(trx, kind, container.id)) throw new TransferInProgress();
      const row = await insertMove(trx, kind, {
        containerId: container.id, state: scheduled.to, source: container.repository_storage,
        destination: destination!,
      });
      await deps.jobs.enqueue(RUN_MOVE_JOB, { kind, moveId: row.id }, { trx });
      return row;
    });
    if (!move) return { ok: false, errors: { [kind]: ['is read-only'] } };
    deps.jobs.wake();
    return { ok: true, move };
  } catch (err) {
    if (err instanceof TransferInProgress) return { ok: false, errors: { [kind]: [GIT_TRANSFER_IN_PROGRESS] } };
    // The one-active-move index: another request scheduled this container in the meantime.
    if (isUniqueViolation(err)) return { ok: false, errors: { [kind]: ['is read-only'] } };
    throw err;
  }
}
