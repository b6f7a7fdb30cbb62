/**
 * Sharing with groups (the Service's ProjectGroupLink and GroupGroupLink): a project or a group
 * shared with another group at an access level, until an optional date. Members of the shared-with
 * group get the lower of their own level in it and the link's `group_access` on what is shared
 * (and, for a shared group, on its sub-groups and projects). One link per pair (unique).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('project_group_links'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('group_access', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_group_links_pair').on('project_group_links').columns(['project_id', 'group_id']).unique().execute();
  await db.schema.createIndex('project_group_links_group').on('project_group_links').columns(['group_id', 'project_id']).execute();

  await withId(db, db.schema.createTable('group_group_links'))
    .addColumn('shared_group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('shared_with_group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('group_access', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('group_group_links_pair').on('group_group_links').columns(['shared_group_id', 'shared_with_group_id']).unique()
    .execute();
  await db.schema.createIndex('group_group_links_with').on('group_group_links').columns(['shared_with_group_id', 'shared_group_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('group_group_links').execute();
  await db.schema.dropTable('project_group_links').execute();
}
