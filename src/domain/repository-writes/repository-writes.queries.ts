/** Every Kysely call on `repository_writes` (git writes in progress, repository-writes.ts). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ContainerKind } from '../storage-moves/storage-moves.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function insertWrite(
  db: Db,
  w: { kind: ContainerKind; containerId: number; startedAt: string; expiresAt: string; owner: string },
): Promise<number> {
  const row = await db.insertInto('repository_writes').values({
    container_type: w.kind, container_id: w.containerId, started_at: w.startedAt, expires_at: w.expiresAt, owner: w.owner,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function deleteWrite(db: Db, id: number): Promise<void> {
  await db.deleteFrom('repository_writes').where('id', '=', id).execute();
}

/** Removes the container's rows that expired before `now` (their processes are gone). */
export async function deleteExpiredWrites(db: Db, kind: ContainerKind, containerId: number, now: string): Promise<void> {
  await db.deleteFrom('repository_writes')
    .where('container_type', '=', kind).where('container_id', '=', containerId).where('expires_at', '<=', now).execute();
}

/** Whether a write on the container started and has not expired at `now`. */
export async function unexpiredWriteExists(db: Db, kind: ContainerKind, containerId: number, now: string): Promise<boolean> {
  const row = await db.selectFrom('repository_writes').select('id')
    .where('container_type', '=', kind).where('container_id', '=', containerId).where('expires_at', '>', now)
    .limit(1).executeTakeFirst();
  return row !== undefined;
}
