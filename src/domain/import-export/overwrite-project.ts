/**
 * An import with `overwrite` (the Service's Projects::OverwriteProjectService, run by the import
 * job once the archive is restored): the import was made beside the project it replaces, at
 * `<path>-<hex>` (request-import.ts), so a failed import never touches it. When the import is
 * complete, in the same transaction as its records:
 * - the old project's stars, members, group links, deploy keys, notification settings (those the
 *   import does not have already), its redirect routes and its place in its fork network (its
 *   membership, its forks, its own fork relationship) move to the imported project;
 * - the old project's rows go as a deletion takes them (Projects::DestroyService, which the
 *   Service schedules right after the swap), its repository after the commit (or by the job that
 *   first gives the forks borrowing its objects their own);
 * - the imported project takes the old one's name and path.
 * The imported project keeps its own id and repository directory (the row names where it lives,
 * so nothing is moved on disk): like the Service's, the project at the path is a new project.
 * Only someone who may administer the namespace overwrites (Importer#overwrite_project's
 * admin_namespace); a project gone meanwhile leaves the import where it is, as in the Service.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import { groupActor } from '../permissions/actors.ts';
import { canOnGroup } from '../permissions/group.policy.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { lockContainers } from '../storage-moves/storage-moves.queries.ts';
import { moveForkRelations } from '../forks/forks.queries.ts';
import { removeProjectRows, type RepositoryRemoval } from '../projects/delete-project.ts';
import { findProjectInNamespaceByPath, moveOverwrittenRelations, takePlace } from './import-export.queries.ts';

/** The overwrite cannot be made: the import fails with this message and the old project stays. */
export class OverwriteRefused extends Error {}

export interface Overwritten {
  project: ProjectRow;
  oldId: number;
  removal: RepositoryRemoval;
}

/** What the swap needs, read before its transaction. */
export interface OverwritePlan {
  originalPath: string;
  namespaceFullPath: string;
}

/**
 * Before the swap's transaction: undefined when no project is at `originalPath` now (the import
 * then stays where it is); the Service's refusal unless `user` may administer the namespace
 * (Importer#overwrite_project's admin_namespace: its owner, an Owner of the group, an administrator).
 */
export async function planOverwrite(
  db: Kysely<DB>, user: UserRow, namespaceId: number, originalPath: string,
): Promise<OverwritePlan | undefined> {
  if (!await findProjectInNamespaceByPath(db, namespaceId, originalPath)) return undefined;
  const paths = (await namespacePathsById(db, [namespaceId])).get(namespaceId);
  if (!paths) return undefined;
  const ns = paths.namespace;
  const allowed = user.admin === 1 || (ns.kind === 'user'
    ? ns.owner_id === user.id
    : canOnGroup(await groupActor(db, user, paths.lineage), 'admin_group', ns));
  if (!allowed) throw new OverwriteRefused(`User ${user.username} (${user.id}) cannot overwrite a project in ${ns.path}`);
  return { originalPath, namespaceFullPath: paths.fullPath };
}

/** Swaps `fresh` into the place of the project the plan names, in `trx`; undefined when it is gone meanwhile. */
export async function overwriteWithImport(
  trx: Transaction<DB>, jobs: JobQueue, fresh: ProjectRow, plan: OverwritePlan, user: UserRow,
): Promise<Overwritten | undefined> {
  const old = await findProjectInNamespaceByPath(trx, fresh.namespace_id, plan.originalPath);
  if (!old || old.id === fresh.id) return undefined;
  const [locked] = await lockContainers(trx, 'project', [old.id]);
  if (!locked) return undefined;
  if (locked.read_only === 1) {
    throw new OverwriteRefused('The project to overwrite is being moved to another storage: try the import again once it has moved');
  }
  await moveOverwrittenRelations(trx, old.id, fresh.id);
  await moveForkRelations(trx, old.id, fresh.id);
  const removal = await removeProjectRows(trx, jobs, locked, user.id);
  const project = await takePlace(trx, fresh.id, { name: old.name, path: old.path, fullPath: `${plan.namespaceFullPath}/${old.path}` });
  return { project, oldId: old.id, removal };
}
