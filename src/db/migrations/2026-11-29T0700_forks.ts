/**
 * Forks (the Service's ForkNetworkMember, reduced to what the API shows): one row per fork naming
 * the project it was forked from. The source's id becomes null when the source is deleted (the
 * Service nullifies forked_from_project_id and the fork stays a fork, `forked?`), so the row is
 * not a foreign key cascade but `set null`.
 *
 * On projects: the import state of a fork whose repository is being made (import_status,
 * import_error, as the Service's ProjectImportState), and objects_from_project_id: whose repository this one borrows objects from through git
 * alternates. That is kept apart from the fork relationship, which the API may remove while the
 * objects are still borrowed; before a repository others borrow from is removed, they get their
 * own copies (domain/forks/borrowed-objects.ts).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('project_forks')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('forked_from_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // GET /projects/:id/forks and forks_count.
  await db.schema.createIndex('project_forks_forked_from').on('project_forks').columns(['forked_from_project_id', 'project_id']).execute();
  await db.schema.alterTable('projects').addColumn('import_status', 'text', (c) => c.notNull().defaultTo('none')).execute();
  await db.schema.alterTable('projects').addColumn('import_error', 'text').execute();
  await db.schema.alterTable('projects').addColumn('objects_from_project_id', 'integer').execute();
  await db.schema.createIndex('projects_objects_from').on('projects').column('objects_from_project_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('projects_objects_from').execute();
  await db.schema.alterTable('projects').dropColumn('objects_from_project_id').execute();
  await db.schema.alterTable('projects').dropColumn('import_error').execute();
  await db.schema.alterTable('projects').dropColumn('import_status').execute();
  await db.schema.dropTable('project_forks').execute();
}
