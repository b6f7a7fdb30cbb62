/** Every Kysely call about forks: the fork relationship rows and the borrowing of objects. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The fork row of `projectId` (a project is a fork when it has one, even once its source is gone). */
export function findForkRow(db: Db, projectId: number) {
  return db.selectFrom('project_forks').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

/** Marks `projectId` forked from `sourceId`; false when it already is a fork (the primary key). */
export async function insertForkRow(db: Db, projectId: number, sourceId: number): Promise<void> {
  await db.insertInto('project_forks').values({ project_id: projectId, forked_from_project_id: sourceId, created_at: nowIso() }).execute();
}

export async function deleteForkRow(db: Db, projectId: number): Promise<boolean> {
  const result = await db.deleteFrom('project_forks').where('project_id', '=', projectId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Which project each of `projectIds` was forked from (those whose source still exists). */
export async function forkedFromOf(db: Db, projectIds: number[]): Promise<Map<number, number>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db.selectFrom('project_forks').select(['project_id', 'forked_from_project_id'])
    .where('project_id', 'in', projectIds).where('forked_from_project_id', 'is not', null).execute();
  return new Map(rows.map((r) => [r.project_id, r.forked_from_project_id!]));
}

/** forks_count: how many live projects were forked from each of `projectIds` (Project#forks). */
export async function forkCountsOf(db: Db, projectIds: number[]): Promise<Map<number, number>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db.selectFrom('project_forks')
    .innerJoin('projects', 'projects.id', 'project_forks.project_id')
    .select(['project_forks.forked_from_project_id as source', (eb) => eb.fn.countAll<number>().as('n')])
    .where('project_forks.forked_from_project_id', 'in', projectIds).where('projects.pending_delete', '=', 0)
    .groupBy('project_forks.forked_from_project_id').execute();
  return new Map(rows.map((r) => [r.source!, Number(r.n)]));
}

/** The ids of the direct forks of `sourceId`, for GET /projects/:id/forks (ForkProjectsFinder). */
export function forkIdsQuery(db: Db, sourceId: number) {
  return db.selectFrom('project_forks').select('project_forks.project_id').where('project_forks.forked_from_project_id', '=', sourceId);
}

/** Projects whose repositories borrow objects from `projectId`'s. */
export function borrowersOf(db: Db, projectId: number): Promise<Pick<ProjectRow, 'id' | 'repository_storage' | 'disk_path'>[]> {
  return db.selectFrom('projects').select(['id', 'repository_storage', 'disk_path'])
    .where('objects_from_project_id', '=', projectId).execute();
}

export async function countBorrowers(db: Db, projectIds: number[]): Promise<number> {
  if (projectIds.length === 0) return 0;
  const row = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('objects_from_project_id', 'in', projectIds).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function stopBorrowing(db: Db, projectId: number): Promise<void> {
  await db.updateTable('projects').set({ objects_from_project_id: null }).where('id', '=', projectId).execute();
}

export async function setImportState(db: Db, projectId: number, status: string, error: string | null): Promise<void> {
  await db.updateTable('projects').set({ import_status: status, import_error: error, updated_at: nowIso() })
    .where('id', '=', projectId).execute();
}

/** The fork network `projectId` belongs to, if any (ForkNetworkMember). */
export async function forkNetworkOf(db: Db, projectId: number): Promise<number | undefined> {
  const row = await db.selectFrom('fork_network_members').select('fork_network_id').where('project_id', '=', projectId).executeTakeFirst();
  return row?.fork_network_id;
}

/**
 * `forkId` joins the network of `sourceId` (ForkService#link_fork_network): a source outside any
 * network becomes the root of a new one (or of the one it was root of), and a fork that was the
 * root of a family of its own moves alone, its forks staying where they are.
 */
export async function joinForkNetwork(trx: Transaction<DB>, forkId: number, sourceId: number): Promise<number> {
  const now = nowIso();
  let network = await forkNetworkOf(trx, sourceId);
  if (network === undefined) {
    const rooted = await trx.selectFrom('fork_networks').select('id').where('root_project_id', '=', sourceId).executeTakeFirst();
    network = rooted?.id ?? (await trx.insertInto('fork_networks').values({ root_project_id: sourceId, created_at: now })
      .returning('id').executeTakeFirstOrThrow()).id;
    await trx.insertInto('fork_network_members').values({ project_id: sourceId, fork_network_id: network, created_at: now }).execute();
  }
  await trx.deleteFrom('fork_network_members').where('project_id', '=', forkId).execute();
  await trx.insertInto('fork_network_members').values({ project_id: forkId, fork_network_id: network, created_at: now }).execute();
  return network;
}

/**
 * `projectId` leaves its network (Projects::UnlinkForkService): its membership goes, its direct
 * forks no longer name it as their source but stay in the network, and a network it was the root
 * of keeps its members without a root.
 */
export async function leaveForkNetwork(trx: Transaction<DB>, projectId: number): Promise<void> {
  await trx.deleteFrom('fork_network_members').where('project_id', '=', projectId).execute();
  await trx.updateTable('project_forks').set({ forked_from_project_id: null }).where('forked_from_project_id', '=', projectId).execute();
  await trx.updateTable('fork_networks').set({ root_project_id: null }).where('root_project_id', '=', projectId).execute();
}

/** Project#in_fork_network_of?: both are members of one network. */
export async function inOneForkNetwork(db: Db, a: number, b: number): Promise<boolean> {
  const rows = await db.selectFrom('fork_network_members').select(['project_id', 'fork_network_id'])
    .where('project_id', 'in', [a, b]).execute();
  return rows.length === 2 && rows[0].fork_network_id === rows[1].fork_network_id;
}

/**
 * Projects::MoveForksService, as an overwrite (import) has it: `toId` takes `fromId`'s place in
 * its fork network — its membership, the forks that named it as their source, the network it is
 * the root of — and its own fork relationship, unless `toId` has one already.
 */
export async function moveForkRelations(trx: Transaction<DB>, fromId: number, toId: number): Promise<void> {
  if (await forkNetworkOf(trx, toId) !== undefined) return;
  await trx.updateTable('fork_network_members').set({ project_id: toId }).where('project_id', '=', fromId).execute();
  await trx.updateTable('project_forks').set({ forked_from_project_id: toId }).where('forked_from_project_id', '=', fromId).execute();
  await trx.updateTable('project_forks').set({ project_id: toId }).where('project_id', '=', fromId).execute();
  await trx.updateTable('fork_networks').set({ root_project_id: toId }).where('root_project_id', '=', fromId).execute();
}
