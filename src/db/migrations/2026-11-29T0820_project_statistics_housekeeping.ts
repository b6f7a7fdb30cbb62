/**
 * Statistics and housekeeping (issue 32, item 7): a project's sizes and commit count as its
 * refresh job last measured them (the Service's ProjectStatistics), its git fetches per day
 * (ProjectDailyStatistic), and the lease of its housekeeping (the Service's exclusive lease
 * `project_housekeeping:<id>`, 24 hours).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  let t = db.schema.createTable('project_statistics')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('commit_count', 'bigint', (c) => c.notNull().defaultTo(0));
  for (const column of [
    'storage_size', 'repository_size', 'wiki_size', 'lfs_objects_size', 'build_artifacts_size', 'pipeline_artifacts_size',
    'packages_size', 'snippets_size', 'uploads_size',
  ]) t = t.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
  await t.addColumn('updated_at', 'text', (c) => c.notNull()).execute();

  await db.schema.createTable('project_daily_statistics')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('fetch_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('project_daily_statistics_pkey', ['project_id', 'date'])
    .execute();

  await db.schema.createTable('project_housekeeping')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('leased_until', 'text', (c) => c.notNull())
    .addColumn('last_run_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['project_housekeeping', 'project_daily_statistics', 'project_statistics']) await db.schema.dropTable(t).execute();
}
