/**
 * Deep pages of GET /users (page 5,000 is offset 100,000; the Service pages users by offset)
 * walk the offset over ids alone (ShapedList's deferred join). On SQLite the users rows live in
 * the table's own b-tree, so walking ids there reads every skipped row: an index of the id alone
 * holds them densely (page 5,000 of 100,000 users: 8.5 ms through the table, 0.6 ms through the
 * index). PostgreSQL walks its primary key index for that, so it gets none.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.createIndex('users_id').on('users').column('id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropIndex('users_id').execute();
}
