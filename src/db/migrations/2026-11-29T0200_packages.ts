/**
 * The package registry's generic packages (the Service's packages_packages and
 * packages_package_files): a package is a name and version of one type in one project, a file one
 * upload into it, kept under KILN_DATA_DIR/packages (file_path, relative to the data directory, as
 * job artifacts are). Sizes stay on the file rows, for the project's packages_size.
 *
 * One package per project, type, name and version: the Service's unique index of generic packages
 * (index_packages_on_project_id_name_version_unique_when_generic). File names may repeat within a
 * package (duplicates are allowed by default in 15.2; the newest wins a download).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('packages'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('package_type', 'text', (c) => c.notNull())
    // Packages::Package statuses: 0 default, 1 hidden, 2 processing, 3 error, 4 pending_destruction.
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('creator_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    // The pipeline of the first job that uploaded into it (the Service's original build info).
    .addColumn('pipeline_id', 'integer', (c) => c.references('ci_pipelines.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('packages_project_type_name_version').on('packages')
    .columns(['project_id', 'package_type', 'name', 'version']).unique().execute();
  // The lists' orders and filters (PackagesFinder, GroupPackagesFinder).
  await db.schema.createIndex('packages_project_created').on('packages').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('packages_project_name').on('packages').columns(['project_id', 'name', 'id']).execute();
  await db.schema.createIndex('packages_project_status').on('packages').columns(['project_id', 'status', 'id']).execute();
  await db.schema.createIndex('packages_pipeline').on('packages').column('pipeline_id').execute();

  await withId(db, db.schema.createTable('package_files'))
    .addColumn('package_id', 'integer', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('file_path', 'text', (c) => c.notNull())
    .addColumn('file_md5', 'text')
    .addColumn('file_sha1', 'text')
    .addColumn('file_sha256', 'text')
    .addColumn('pipeline_id', 'integer', (c) => c.references('ci_pipelines.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('package_files_package_name').on('package_files').columns(['package_id', 'file_name', 'id']).execute();
  await db.schema.createIndex('package_files_project').on('package_files').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('package_files_pipeline').on('package_files').column('pipeline_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('package_files').execute();
  await db.schema.dropTable('packages').execute();
}
