/**
 * The instance-wide issue list of administrators (GET /issues?scope=all, every project) in its
 * two main orders: created_at and updated_at, newest first, id breaking ties. Project and group
 * lists keep the project-led indexes of 2026-11-27T1000_collaboration_core.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('issues_created').on('issues').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('issues_updated').on('issues').columns(['updated_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('issues_updated').execute();
  await db.schema.dropIndex('issues_created').execute();
}
