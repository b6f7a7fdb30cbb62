/**
 * Every Kysely call of storage moves, for the three kinds of container (reference §4): projects,
 * snippets, and groups (a group's wiki repository). The kinds differ only in table and column
 * names, so one set of functions serves all three through `CONTAINERS`; the dynamic names go
 * through `Kysely<any>` here and nowhere else.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageMoveRow } from '../../db/tables/storage-moves.ts';
import { nowIso } from '../clock.ts';
import { ACTIVE_STATES } from './state-machine.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type ContainerKind = 'project' | 'snippet' | 'group';
export const CONTAINER_KINDS: ContainerKind[] = ['project', 'snippet', 'group'];

interface ContainerTable {
  moves: 'project_repository_storage_moves' | 'snippet_repository_storage_moves' | 'group_repository_storage_moves';
  fk: 'project_id' | 'snippet_id' | 'group_id';
  table: 'projects' | 'snippets' | 'namespaces';
  /** The repository's path relative to its shard. */
  pathColumn: 'disk_path' | 'wiki_disk_path';
}

export const CONTAINERS: Record<ContainerKind, ContainerTable> = {
  project: { moves: 'project_repository_storage_moves', fk: 'project_id', table: 'projects', pathColumn: 'disk_path' },
  snippet: { moves: 'snippet_repository_storage_moves', fk: 'snippet_id', table: 'snippets', pathColumn: 'disk_path' },
  group: { moves: 'group_repository_storage_moves', fk: 'group_id', table: 'namespaces', pathColumn: 'wiki_disk_path' },
};

/** What a move needs to know about its container. */
export interface Container {
  id: number;
  repository_storage: string;
  disk_path: string;
  read_only: number;
  /** Projects only; always 0 for snippets and groups. */
  archived: number;
}

const any = (db: Db) => db as unknown as Kysely<any>;

function containerQuery(db: Db, kind: ContainerKind) {
  const c = CONTAINERS[kind];
  let qb = any(db).selectFrom(c.table).select(['id', 'repository_storage', `${c.pathColumn} as disk_path`, 'read_only'])
    .select(kind === 'project' ? sql<number>`archived`.as('archived') : sql<number>`0`.as('archived'));
  // A group is a namespace of kind 'group' with a wiki repository; projects being deleted are gone.
  if (kind === 'group') qb = qb.where('kind', '=', 'group').where('wiki_disk_path', 'is not', null);
  if (kind === 'project') qb = qb.where('pending_delete', '=', 0);
  return qb;
}

export async function findContainer(db: Db, kind: ContainerKind, id: number): Promise<Container | undefined> {
  return containerQuery(db, kind).where('id', '=', id).executeTakeFirst() as Promise<Container | undefined>;
}

/** A page of the containers on `storage`, by id, after `afterId` (bulk scheduling walks these). */
export async function containersOnStorage(
  db: Db, kind: ContainerKind, storage: string, afterId: number, limit: number,
): Promise<Container[]> {
  return containerQuery(db, kind).where('repository_storage', '=', storage).where('id', '>', afterId)
    .orderBy('id').limit(limit).execute() as Promise<Container[]>;
}

/** Read-only from `storage` on, unless already read-only or elsewhere; false when refused. */
export async function markReadOnly(db: Db, kind: ContainerKind, id: number, storage: string): Promise<boolean> {
  const r = await any(db).updateTable(CONTAINERS[kind].table).set({ read_only: 1 })
    .where('id', '=', id).where('read_only', '=', 0).where('repository_storage', '=', storage).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function markWritable(db: Db, kind: ContainerKind, id: number): Promise<void> {
  await any(db).updateTable(CONTAINERS[kind].table).set({ read_only: 0 }).where('id', '=', id).execute();
}

/** A container as a write to its repository finds it, its row locked (`lockContainers`). */
export type LockedContainer = Omit<Container, 'archived'>;

/**
 * Locks the containers' rows for a write a move would lose (a commit, a new HEAD, removing the
 * repository) and answers them as they are now: the caller refuses the write if one is
 * `read_only`, and otherwise makes it, on the repository these rows name, before its
 * transaction ends. Scheduling a move marks the container read-only with a conditional UPDATE
 * of the same row (`markReadOnly`), so the two are serialised: on PostgreSQL the row lock makes
 * the schedule wait until the write has committed (the copy then includes it) or the write
 * wait until the schedule has (it then sees `read_only`); SQLite has one writer at a time. A
 * write thus never lands between a move's copy, its last ref check and its switch. A git push,
 * which writes for longer than a transaction should last, locks the row the same way but only to
 * record its write (repository-writes.ts), which the schedule then finds.
 */
export async function lockContainers(trx: Transaction<DB>, kind: ContainerKind, ids: number[]): Promise<LockedContainer[]> {
  if (ids.length === 0) return [];
  const c = CONTAINERS[kind];
  let qb = any(trx).updateTable(c.table).set((eb) => ({ read_only: eb.ref('read_only') })).where('id', 'in', ids);
  // A group without a wiki has no repository to write to.
  if (kind === 'group') qb = qb.where('wiki_disk_path', 'is not', null);
  return qb.returning(['id', 'repository_storage', `${c.pathColumn} as disk_path`, 'read_only']).execute() as Promise<LockedContainer[]>;
}

/** Points the container at `to` and makes it writable, only if it still points at `from`. */
export async function switchStorage(db: Db, kind: ContainerKind, id: number, from: string, to: string): Promise<boolean> {
  const r = await any(db).updateTable(CONTAINERS[kind].table).set({ repository_storage: to, read_only: 0 })
    .where('id', '=', id).where('repository_storage', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Whether any container of any kind keeps its repository at `diskPath` on `storage`. */
export async function repositoryPathInUse(db: Db, storage: string, diskPath: string): Promise<boolean> {
  for (const kind of CONTAINER_KINDS) {
    const c = CONTAINERS[kind];
    const row = await any(db).selectFrom(c.table).select('id')
      .where('repository_storage', '=', storage).where(c.pathColumn, '=', diskPath).limit(1).executeTakeFirst();
    if (row) return true;
  }
  return false;
}

function moveQuery(db: Db, kind: ContainerKind) {
  const c = CONTAINERS[kind];
  return any(db).selectFrom(c.moves).select([
    'id', `${c.fk} as container_id`, 'state', 'source_storage_name', 'destination_storage_name', 'error_message',
    'created_at', 'updated_at',
  ]);
}

export async function insertMove(
  db: Db, kind: ContainerKind, m: { containerId: number; state: number; source: string; destination: string },
): Promise<StorageMoveRow> {
  const c = CONTAINERS[kind];
  const now = nowIso();
  const row = await any(db).insertInto(c.moves).values({
    [c.fk]: m.containerId, state: m.state, source_storage_name: m.source, destination_storage_name: m.destination,
    created_at: now, updated_at: now,
  }).returning([
    'id', 'state', 'source_storage_name', 'destination_storage_name', 'error_message', 'created_at',
    'updated_at',
  ]).executeTakeFirstOrThrow();
  return { ...row, container_id: m.containerId } as StorageMoveRow;
}

export async function findMove(db: Db, kind: ContainerKind, id: number, containerId?: number): Promise<StorageMoveRow | undefined> {
  let qb = moveQuery(db, kind).where('id', '=', id);
  if (containerId !== undefined) qb = qb.where(CONTAINERS[kind].fk, '=', containerId);
  return qb.executeTakeFirst() as Promise<StorageMoveRow | undefined>;
}

/** Moves newest first (`created_at DESC`, reference §4), of one container or of all. */
export function listMoves(db: Kysely<DB>, kind: ContainerKind, containerId?: number) {
  let qb = moveQuery(db, kind);
  if (containerId !== undefined) qb = qb.where(CONTAINERS[kind].fk, '=', containerId);
  return qb.orderBy('created_at', 'desc').orderBy('id', 'desc');
}

/** Moves from `from` to `to` only if the row is still in `from`; false when it was not. */
export async function updateMoveState(
  db: Db, kind: ContainerKind, id: number, from: number, to: number, errorMessage?: string,
): Promise<boolean> {
  const r = await any(db).updateTable(CONTAINERS[kind].moves)
    .set({ state: to, updated_at: nowIso(), ...(errorMessage !== undefined ? { error_message: errorMessage } : {}) })
    .where('id', '=', id).where('state', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The container's move that is under way, if any. */
export async function activeMove(db: Db, kind: ContainerKind, containerId: number): Promise<StorageMoveRow | undefined> {
  return moveQuery(db, kind).where(
    CONTAINERS[kind].fk, '=', containerId,
  ).where('state', 'in', ACTIVE_STATES).executeTakeFirst() as Promise<StorageMoveRow | undefined>;
}

/** The containers a page of moves names, for presenting them (one query per kind of row). */
export async function containerRowsForMoves(db: Db, kind: ContainerKind, ids: number[]) {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return { projects: [], snippets: [], groups: [], users: [] };
  if (kind === 'project') {
    return {
      projects: await db.selectFrom('projects').selectAll().where('id', 'in', unique).execute(), snippets: [],
      groups: [], users: [],
    };
  }
  if (kind === 'group') {
    return {
      projects: [], snippets: [],
      groups: await db.selectFrom('namespaces').selectAll().where('id', 'in', unique).execute(), users: [],
    };
  }
  const snippets = await db.selectFrom('snippets').selectAll().where('id', 'in', unique).execute();
  const authorIds = [...new Set(snippets.map((s) => s.author_id))];
  const users = authorIds.length ? await db.selectFrom('users').selectAll().where('id', 'in', authorIds).execute() : [];
  return { projects: [], snippets, groups: [], users };
}
