/**
 * Removes a project (Projects::DestroyService): in one transaction, the row is claimed
 * (pending_delete) and locked, its membership rows and the row itself go; then its repository
 * on disk, where the locked row said it is. Refused while the repository is read-only for a
 * move: removing it mid-move would leave the copy behind on the destination or pull the source
 * from under the copy, and the lock (`lockContainers`) keeps a move from being scheduled until
 * the deletion has committed. Forks stay forks with no source (the Service nullifies their
 * forked_from_project_id) and stay in their fork network; a repository whose objects forks borrow
 * is removed by a job that first gives the forks their own (domain/forks/borrowed-objects.ts), so
 * they never lose an object. DestroyService runs Projects::UnlinkForkService first: the open
 * requests from the project into other projects of its network are closed by the one deleting
 * it (those into the project go with it).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteMembersOf } from '../members/members.queries.ts';
import { deleteProjectRow, updateProjectRow } from './projects.queries.ts';
import { removeRepository } from '../repositories/repositories.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { countBorrowers } from '../forks/forks.queries.ts';
import { closeForkRequests } from '../merge-requests/close-fork-requests.ts';
import { REMOVE_REPOSITORIES_JOB, type RemoveRepositoriesPayload } from '../groups/delete-group.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { lockContainers, type LockedContainer } from '../storage-moves/storage-moves.queries.ts';

export type DeleteProjectResult = { ok: true } | { ok: false; reason: 'read_only' | 'not_found' };

/** The repository to remove once the transaction has committed; null when a job was queued for it. */
export type RepositoryRemoval = { storage: string; diskPath: string } | null;

/**
 * The rows of a project locked by the caller (`lockContainers`, not read-only) go, in the caller's
 * transaction; `actorId` closes the requests from it into other projects.
 */
export async function removeProjectRows(
  trx: Transaction<DB>, jobs: JobQueue, locked: LockedContainer, actorId: number | null,
): Promise<RepositoryRemoval> {
  const id = locked.id;
  if (actorId !== null) await closeForkRequests(trx, id, actorId, { into: false });
  await updateProjectRow(trx, id, { pending_delete: 1 });
  await deleteMembersOf(trx, 'Project', [id]);
  await deleteProjectRow(trx, id);
  if (await countBorrowers(trx, [id]) > 0) {
    const repositories = [{ storage: locked.repository_storage, diskPath: locked.disk_path, projectId: id }];
    await jobs.enqueue(REMOVE_REPOSITORIES_JOB, { repositories } satisfies RemoveRepositoriesPayload, { trx });
    return null;
  }
  return { storage: locked.repository_storage, diskPath: locked.disk_path };
}

/** After the commit: the repository goes now, or the queued job is woken. */
export async function finishRemoval(jobs: JobQueue, shards: StorageShard[], removal: RepositoryRemoval): Promise<void> {
  if (removal) await removeRepository(repositoryPath(shards, removal.storage, removal.diskPath));
  else jobs.wake();
}

export async function deleteProject(
  db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], id: number, actorId: number | null = null,
): Promise<DeleteProjectResult> {
  const found = await db.transaction().execute(async (trx): Promise<DeleteProjectResult | { removal: RepositoryRemoval }> => {
    const [locked] = await lockContainers(trx, 'project', [id]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' };
    return { removal: await removeProjectRows(trx, jobs, locked, actorId) };
  });
  if ('ok' in found) return found;
  await finishRemoval(jobs, shards, found.removal);
  return { ok: true };
}
