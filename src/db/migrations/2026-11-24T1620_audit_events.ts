/**
 * Audit events: what kiln's own operations did, by whom, to what, from where. The author is kept
 * by id and name (details) so an event outlives its author; entity is the User, Project or Group
 * the event belongs to. Indexes serve the three lists: by entity newest first, and the
 * instance list by id (created_at filters ride on the id order).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('audit_events'))
    .addColumn('author_id', 'integer', (c) => c.notNull())
    .addColumn('entity_id', 'integer', (c) => c.notNull())
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_entity').on('audit_events').columns(['entity_type', 'entity_id', 'id']).execute();
  await db.schema.createIndex('audit_events_created_at').on('audit_events').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
