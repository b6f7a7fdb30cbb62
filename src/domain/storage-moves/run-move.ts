/**
 * Runs a scheduled move (the Service's UpdateRepositoryStorageService and its worker, reference
 * §4; aesthetics §2). Crash-safe by construction: every step either leaves the container on its
 * complete source repository, or switches it to a complete, verified copy in one transaction.
 *
 *   start             scheduled → started, only if still scheduled (a retried job finds it
 *                     started and redoes the copy: the job's lease guarantees the earlier run
 *                     is dead; a leftover temporary copy is removed first)
 *   copy              cp -a into <destination>/.kiln-moves/<kind>-<id>.git
 *   verify            refs and HEAD identical, fsck connectivity of the copy
 *   place             rename into the repository's path on the destination (atomic)
 *   finish_replication  one transaction: the container points at the destination, writable
 *   cleanup           remove the source repository, then finish_cleanup → finished
 *
 * Any failure before the switch: the copy is removed, the move is `failed` with its
 * error_message, and the container is writable on its untouched source, ready to be scheduled
 * again. A failure removing the source: `cleanup_failed` (the container already lives on the
 * destination). A stop or a lost lease leaves the state as it is for the next run to resume.
 */
import path from 'node:path';
import fs from 'node:fs/promises';
import { repositoryExists } from '../repositories/repositories.ts';
import { checkShard, isSamePlace } from './shards.ts';
import { repointBorrowers } from '../forks/borrowed-objects.ts';
import { checkConnectivity, copyRepository, exists, pause, refSnapshot, removeTree } from './repository-copy.ts';
import {
  findContainer, findMove, markWritable, repositoryPathInUse, switchStorage, updateMoveState,
  type ContainerKind,
} from './storage-moves.queries.ts';
import { MOVE_STATES, transition, type MoveEvent } from './state-machine.ts';
import type { StorageMoveRow } from '../../db/tables/storage-moves.ts';
import type { MoveDeps } from './schedule-move.ts';
import type { JobContext } from '../background-jobs/job-queue.ts';

/** The Service truncates error_message to 256 characters. */
const ERROR_MESSAGE_LIMIT = 256;

/** Directory on each shard for copies that are not (yet) any container's repository. */
export const MOVES_TMP_DIR = '.kiln-moves';

class MoveFailed extends Error {}

/**
 * Fires `event` on the move, with its side effect on the container, in one transaction; false
 * when the move was no longer in the state it was read in (someone else moved it on).
 */
async function fire(deps: MoveDeps, kind: ContainerKind, move: StorageMoveRow, event: MoveEvent, errorMessage?: string): Promise<boolean> {
  const t = transition(move.state, event);
  if (!t) return false;
  return deps.db.transaction().execute(async (trx) => {
    if (!(await updateMoveState(trx, kind, move.id, move.state, t.to, errorMessage))) return false;
    if (t.effect === 'mark_writable') await markWritable(trx, kind, move.container_id);
    if (t.effect === 'switch_storage_and_mark_writable'
      && !(await switchStorage(trx, kind, move.container_id, move.source_storage_name, move.destination_storage_name))) {
      throw new MoveFailed(`the ${kind} no longer uses storage "${move.source_storage_name}"`);
    }
    return true;
  });
}

export async function runMove(deps: MoveDeps, kind: ContainerKind, moveId: number, job: JobContext): Promise<void> {
  let move = await findMove(deps.db, kind, moveId);
  if (!move) return; // the container was deleted, and its moves with it
  if (move.state === MOVE_STATES.scheduled) {
    if (!(await fire(deps, kind, move, 'start'))) return;
    move = { ...move, state: MOVE_STATES.started };
  }
  if (move.state === MOVE_STATES.started) {
    try {
      await replicate(deps, kind, move, job);
    } catch (err) {
      if (job.signal.aborted) throw err;
      await removeTree(tmpPath(deps, kind, move)).catch(() => undefined);
      await fire(deps, kind, move, 'do_fail', errorText(err));
      return;
    }
    move = { ...move, state: MOVE_STATES.replicated };
  }
  if (move.state === MOVE_STATES.replicated) await cleanUp(deps, kind, move, job);
  // finished, failed, cleanup_failed: a duplicate or late job; nothing left to do.
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > ERROR_MESSAGE_LIMIT ? text.slice(0, ERROR_MESSAGE_LIMIT) : text;
}

function tmpPath(deps: MoveDeps, kind: ContainerKind, move: StorageMoveRow): string {
  const root = deps.shards.find((s) => s.name === move.destination_storage_name)?.path ?? '/nonexistent';
  return path.join(root, MOVES_TMP_DIR, `${kind}-${move.id}.git`);
}

async function replicate(deps: MoveDeps, kind: ContainerKind, move: StorageMoveRow, job: JobContext): Promise<void> {
  const container = await findContainer(deps.db, kind, move.container_id);
  if (!container) throw new MoveFailed(`the ${kind} no longer exists`);
  // The spec: "archived projects fail to move and must be unarchived first".
  if (container.archived === 1) throw new MoveFailed('Project is archived: unarchive it, then schedule the move again');
  if (container.repository_storage !== move.source_storage_name) {
    throw new MoveFailed(`the ${kind} is on storage "${container.repository_storage}", not "${move.source_storage_name}"`);
  }
  const source = await checkShard(deps.shards, move.source_storage_name);
  if (!source.ok) throw new MoveFailed(`source ${source.detail}`);
  const destination = await checkShard(deps.shards, move.destination_storage_name);
  if (!destination.ok) throw new MoveFailed(`destination ${destination.detail}`);
  if (isSamePlace(source, destination)) throw new MoveFailed('the destination is the same directory as the source');

  const sourceRepo = path.join(source.realRoot, container.disk_path);
  if (!(await repositoryExists(sourceRepo))) {
    throw new MoveFailed(`no repository at ${container.disk_path} on storage "${move.source_storage_name}"`);
  }
  const finalPath = path.join(destination.realRoot, container.disk_path);
  const tmp = tmpPath(deps, kind, move);

  // A run interrupted by a crash may have left a partial copy: start over from a clean slate.
  await removeTree(tmp);
  // Not recursive: a shard directory that vanished since the check must not be created anew.
  await fs.mkdir(path.dirname(tmp)).catch((err: { code?: string }) => { if (err.code !== 'EEXIST') throw err; });
  // The source is read-only now: its refs can be read while it is being copied.
  const [expected] = await Promise.all([refSnapshot(sourceRepo, job.signal), copyRepository(sourceRepo, tmp, job.signal)]);
  if (deps.testDelayMs) await pause(deps.testDelayMs, job.signal);

  try {
    const [copied] = await Promise.all([refSnapshot(tmp, job.signal), checkConnectivity(tmp, job.signal)]);
    if (copied !== expected) throw new MoveFailed('the refs of the copy differ from the source');
  } catch (err) {
    if (job.signal.aborted) throw err;
    throw new MoveFailed(`verification failed: ${errorText(err)}`);
  }

  // No push writes now: the schedule was refused while one was in progress, and later ones find
  // the repository read-only (repository-writes.ts). Compare once more all the same, before the
  // copy takes the source's place: a write kiln did not see coming must fail the move, not be lost.
  const [current] = await Promise.all([refSnapshot(sourceRepo, job.signal), job.holdLease()]);
  if (current !== expected) throw new MoveFailed('the source repository changed during the move');
  if (await exists(finalPath)) {
    // Another container's repository is never replaced. An unreferenced one is what a run that
    // crashed between placing its copy and switching the storage left behind.
    if (await repositoryPathInUse(deps.db, move.destination_storage_name, container.disk_path)) {
      throw new MoveFailed(`a repository already exists at ${container.disk_path} on storage "${move.destination_storage_name}"`);
    }
    await removeTree(finalPath);
  }
  await fs.mkdir(path.dirname(finalPath), { recursive: true });
  await fs.rename(tmp, finalPath);
  try {
    await job.holdLease();
    if (!(await fire(deps, kind, move, 'finish_replication'))) throw new MoveFailed('the move was changed by another worker');
  } catch (err) {
    await removeTree(finalPath);
    throw err;
  }
}

async function cleanUp(deps: MoveDeps, kind: ContainerKind, move: StorageMoveRow, job: JobContext): Promise<void> {
  try {
    const container = await findContainer(deps.db, kind, move.container_id);
    const source = await checkShard(deps.shards, move.source_storage_name);
    const destination = await checkShard(deps.shards, move.destination_storage_name);
    if (!source.ok) throw new MoveFailed(`source ${source.detail}`);
    // Deleting the source is safe only when the container lives on a different directory now.
    if (container && container.repository_storage === move.destination_storage_name && destination.ok && !isSamePlace(
      source, destination,
    )) {
      await job.holdLease();
      // Forks borrowing the project's objects read them from the new place before the old goes.
      if (kind === 'project') {
        await repointBorrowers(deps.db, deps.shards, container.id, path.join(destination.realRoot, container.disk_path));
      }
      await removeTree(path.join(source.realRoot, container.disk_path));
    }
    await fire(deps, kind, move, 'finish_cleanup');
  } catch (err) {
    if (job.signal.aborted) throw err;
    await fire(deps, kind, move, 'do_fail', errorText(err));
  }
}

/** When a move's job is given up (its runs kept crashing): fail it, leaving the container usable. */
export async function giveUpMove(deps: MoveDeps, kind: ContainerKind, moveId: number, lastError: string): Promise<void> {
  const move = await findMove(deps.db, kind, moveId);
  if (!move) return;
  if (move.state === MOVE_STATES.started || move.state === MOVE_STATES.scheduled) {
    await removeTree(tmpPath(deps, kind, move)).catch(() => undefined);
  }
  await fire(deps, kind, move, 'do_fail', errorText(`the move was interrupted too often: ${lastError}`));
}
