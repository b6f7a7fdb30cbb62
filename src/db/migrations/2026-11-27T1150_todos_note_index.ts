/**
 * Deleting a note removes the todos it raised (Notes::DestroyService; Todo belongs to its note):
 * an index on todos.note_id, so that removal reads only that note's todos and not the table.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('todos_note').on('todos').column('note_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('todos_note').execute();
}
