/**
 * Removes a project (Projects::DestroyService): its membership rows and the project row in one
 * transaction, then its repository on disk. The row is first marked pending_delete so no
 * request finds it while the rest happens.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { deleteMembersOf } from '../members/members.queries.ts';
import { deleteProjectRow, updateProjectRow } from './projects.queries.ts';
import { removeRepository } from '../repositories/repositories.ts';
import { repositoryPath } from '../repositories/storage.ts';

export async function deleteProject(db: Kysely<DB>, shards: StorageShard[], project: ProjectRow): Promise<void> {
  await updateProjectRow(db, project.id, { pending_delete: 1 });
  await db.transaction().execute(async (trx) => {
    await deleteMembersOf(trx, 'Project', [project.id]);
    await deleteProjectRow(trx, project.id);
  });
  await removeRepository(repositoryPath(shards, project.repository_storage, project.disk_path));
}
