/**
 * `GET /audit_events?entity_id=` without `entity_type` (the Service accepts either alone): the
 * (entity_type, entity_id, id) index cannot lead with the id, so the list read every event.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('audit_events_entity_id').on('audit_events').columns(['entity_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('audit_events_entity_id').execute();
}
