/**
 * Project and group export and import (the Service's ProjectExportJob / GroupExport and
 * ProjectImportState, reduced to what the API shows).
 *
 * `project_exports` / `group_exports`: the latest export of a project or a group (one row each:
 * a new export replaces the old, as the Service's `remove_exports` before `add_export_job`), with
 * its state (queued → started → finished | failed), the archive's file under the data directory
 * and, for a project, the `upload[url]` it is sent to once made.
 *
 * On projects: `import_type` ('gitlab_project' for an imported archive) and `import_failed_relations`
 * (JSON list), beside the import_status/import_error of migration 2026-11-29T0700.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('project_exports'))
    .addColumn('project_id', 'integer', (c) => c.notNull().unique().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('upload_url', 'text')
    .addColumn('upload_method', 'text')
    .addColumn('file_name', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('group_exports'))
    .addColumn('group_id', 'integer', (c) => c.notNull().unique().references('namespaces.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('projects').addColumn('import_type', 'text').execute();
  await db.schema.alterTable('projects').addColumn('import_failed_relations', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('import_failed_relations').execute();
  await db.schema.alterTable('projects').dropColumn('import_type').execute();
  await db.schema.dropTable('group_exports').execute();
  await db.schema.dropTable('project_exports').execute();
}
