/** Every Kysely call of the broadcast messages area. */
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BroadcastMessageRow, BroadcastMessagesTable } from '../../db/tables/instance-administration.ts';
import { isStorableId } from '../../db/constraints.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** BroadcastMessage.all.order_id_desc (lib/api/broadcast_messages.rb). */
export function broadcastMessagesQuery(db: Db) {
  return db.selectFrom('broadcast_messages').selectAll().orderBy('id', 'desc');
}

export function findBroadcastMessage(db: Db, id: number): Promise<BroadcastMessageRow | undefined> {
  if (!isStorableId(id)) return Promise.resolve(undefined);
  return db.selectFrom('broadcast_messages').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertBroadcastMessage(db: Db, values: Insertable<BroadcastMessagesTable>): Promise<BroadcastMessageRow> {
  return db.insertInto('broadcast_messages').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateBroadcastMessage(db: Db, id: number, values: Updateable<BroadcastMessagesTable>): Promise<BroadcastMessageRow> {
  return db.updateTable('broadcast_messages').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteBroadcastMessage(db: Db, id: number): Promise<void> {
  await db.deleteFrom('broadcast_messages').where('id', '=', id).execute();
}

/**
 * BroadcastMessage.current_and_future_messages: the messages that have not ended, oldest first
 * (order_id_asc), at most `limit` of them (the pages show what is current among these).
 */
export function currentAndFutureBroadcastMessages(db: Db, now: string, limit: number): Promise<BroadcastMessageRow[]> {
  return db.selectFrom('broadcast_messages').selectAll().where('ends_at', '>', now).orderBy('id', 'asc').limit(limit).execute();
}
