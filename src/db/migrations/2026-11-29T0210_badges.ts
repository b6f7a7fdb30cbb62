/**
 * Project and group badges (the Service's badges table with its ProjectBadge / GroupBadge types):
 * a link and an image URL, which may hold %{…} placeholders, an optional name, and the one project
 * or group that holds it (cascading with it). Lists read a holder's badges in created_at order.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('badges'))
    .addColumn('link_url', 'text', (c) => c.notNull())
    .addColumn('image_url', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    // 'ProjectBadge' or 'GroupBadge'.
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('badges_project').on('badges').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('badges_group').on('badges').columns(['group_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('badges').execute();
}
