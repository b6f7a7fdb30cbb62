/**
 * Removes a project (Projects::DestroyService): in one transaction, the row is claimed
 * (pending_delete) and locked, its membership rows and the row itself go; then its repository
 * on disk, where the locked row said it is. Refused while the repository is read-only for a
 * move: removing it mid-move would leave the copy behind on the destination or pull the source
 * from under the copy, and the lock (`lockContainers`) keeps a move from being scheduled until
 * the deletion has committed. Forks stay forks with no source (the Service nullifies their
 * forked_from_project_id); a repository whose objects forks borrow is removed by a job that first
 * gives the forks their own (domain/forks/borrowed-objects.ts), so they never lose an object.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteMembersOf } from '../members/members.queries.ts';
import { deleteProjectRow, updateProjectRow } from './projects.queries.ts';
import { removeRepository } from '../repositories/repositories.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { countBorrowers } from '../forks/forks.queries.ts';
import { REMOVE_REPOSITORIES_JOB, type RemoveRepositoriesPayload } from '../groups/delete-group.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { lockContainers, type LockedContainer } from '../storage-moves/storage-moves.queries.ts';

export type DeleteProjectResult = { ok: true } | { ok: false; reason: 'read_only' | 'not_found' };

export async function deleteProject(db: Kysely<DB>, jobs: JobQueue, shards: StorageShard[], id: number): Promise<DeleteProjectResult> {
  const found = await db.transaction().execute(async (trx): Promise<LockedContainer | DeleteProjectResult | { ok: true; queued: true }> => {
    const [locked] = await lockContainers(trx, 'project', [id]);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.read_only === 1) return { ok: false, reason: 'read_only' };
    await updateProjectRow(trx, id, { pending_delete: 1 });
    await deleteMembersOf(trx, 'Project', [id]);
    await deleteProjectRow(trx, id);
    if (await countBorrowers(trx, [id]) > 0) {
      const repositories = [{ storage: locked.repository_storage, diskPath: locked.disk_path, projectId: id }];
      await jobs.enqueue(REMOVE_REPOSITORIES_JOB, { repositories } satisfies RemoveRepositoriesPayload, { trx });
      return { ok: true, queued: true };
    }
    return locked;
  });
  if ('queued' in found) {
    jobs.wake();
    return { ok: true };
  }
  if ('ok' in found) return found;
  await removeRepository(repositoryPath(shards, found.repository_storage, found.disk_path));
  return { ok: true };
}
