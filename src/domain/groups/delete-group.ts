/**
 * Removes a group (DELETE /groups/:id; the Service's Groups::DestroyService#async_execute, which
 * answers 202 and leaves the work to GroupDestroyWorker). In one transaction the group, every
 * sub-group below it and every project they hold go with their memberships, and a background
 * job is queued that removes their repositories (project repositories and group wikis) from disk.
 * The rows go first so nothing can reach a repository the job is about to remove; the job then
 * works from the list it was given.
 *
 * The bots of the access tokens of those groups and projects are returned, read before their
 * memberships go, for the caller to delete (as a project's deletion does, Projects::DestroyService
 * removing its bots); `record` writes in the same transaction what must commit with the deletion
 * (the audit event).
 *
 * Refused while any of those repositories is read-only for a storage move: the rows are locked
 * (`lockContainers`), as a project's deletion locks its row, so a move cannot be scheduled
 * between the check and the commit, and a removal never pulls a repository from under a copy.
 * As each project's deletion does, the open requests from those projects into projects that
 * stay are closed by `actorId` (delete-project.ts).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { lockContainers, repositoryPathInUse } from '../storage-moves/storage-moves.queries.ts';
import { removeRepository } from '../repositories/repositories.ts';
import { releaseBorrowers } from '../forks/borrowed-objects.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { resourceBotIdsOf } from '../tokens/tokens.queries.ts';
import { deleteGroupsWithProjects, groupTrees } from './groups.queries.ts';
import { closeForkRequests } from '../merge-requests/close-fork-requests.ts';

/** The background job that removes repositories whose rows are gone. */
export const REMOVE_REPOSITORIES_JOB = 'repositories.remove';

export interface RepositoryLocation {
  storage: string;
  diskPath: string;
  /** A project's repository: forks borrowing its objects get their own first (domain/forks/borrowed-objects.ts). */
  projectId?: number;
}

export interface RemoveRepositoriesPayload {
  repositories: RepositoryLocation[];
}

export type DeleteGroupResult = { ok: true; botIds: number[] } | { ok: false; reason: 'read_only' | 'not_found' };

export async function deleteGroup(
  db: Kysely<DB>, jobs: JobQueue, groupId: number, record?: (trx: Transaction<DB>) => Promise<void>, actorId: number | null = null,
): Promise<DeleteGroupResult> {
  const result = await db.transaction().execute(async (trx): Promise<DeleteGroupResult> => {
    const trees = await groupTrees(trx, [groupId]);
    if (!trees.groups.some((g) => g.id === groupId)) return { ok: false, reason: 'not_found' };
    const projects = await lockContainers(trx, 'project', trees.projects.map((p) => p.id));
    const wikis = await lockContainers(trx, 'group', trees.groups.map((g) => g.id));
    if ([...projects, ...wikis].some((c) => c.read_only === 1)) return { ok: false, reason: 'read_only' };
    const groupIds = trees.groups.map((g) => g.id);
    const projectIds = trees.projects.map((p) => p.id);
    const bots = [...await resourceBotIdsOf(trx, 'Namespace', groupIds), ...await resourceBotIdsOf(trx, 'Project', projectIds)];
    // Groups::DestroyService destroys each project with Projects::DestroyService, whose
    // UnlinkForkService closes the open requests from it into projects that stay.
    if (actorId !== null) for (const id of projectIds) await closeForkRequests(trx, id, actorId, { into: false, goingToo: projectIds });
    await deleteGroupsWithProjects(trx, groupIds, projectIds);
    const repositories = [
      ...projects.map((c) => ({ storage: c.repository_storage, diskPath: c.disk_path, projectId: c.id })),
      ...wikis.map((c) => ({ storage: c.repository_storage, diskPath: c.disk_path })),
    ];
    if (repositories.length > 0) await jobs.enqueue(REMOVE_REPOSITORIES_JOB, { repositories } satisfies RemoveRepositoriesPayload, { trx });
    if (record) await record(trx);
    return { ok: true, botIds: [...new Set(bots)] };
  });
  if (result.ok) jobs.wake();
  return result;
}

/**
 * The job: removes each listed repository unless a row took its place since (a new project or
 * group wiki at the same disk path on the same shard). Idempotent, as the queue requires: a
 * repository already gone is simply gone.
 */
export async function removeRepositories(
  db: Kysely<DB>, shards: StorageShard[], payload: RemoveRepositoriesPayload, signal: AbortSignal,
): Promise<void> {
  for (const repo of payload.repositories) {
    if (signal.aborted) throw new Error('stopped before every repository was removed');
    if (repo.projectId !== undefined) await releaseBorrowers(db, shards, repo.projectId);
    if (await repositoryPathInUse(db, repo.storage, repo.diskPath)) continue;
    await removeRepository(repositoryPath(shards, repo.storage, repo.diskPath));
  }
}
