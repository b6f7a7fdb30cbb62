/**
 * Wiki page metadata (the Service's wiki_page_meta and wiki_page_slugs tables, WikiPage::Meta):
 * a record per page of a project wiki that activity events point at (target type
 * WikiPage::Meta), with the slugs it has been known by; a slug names one page of a project.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('wiki_page_meta'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('wiki_page_meta_project').on('wiki_page_meta').columns(['project_id']).execute();
  await withId(db, db.schema.createTable('wiki_page_slugs'))
    .addColumn('wiki_page_meta_id', 'integer', (c) => c.notNull().references('wiki_page_meta.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('canonical', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('wiki_page_slugs_project_slug').on('wiki_page_slugs').columns(['project_id', 'slug']).unique().execute();
  await db.schema.createIndex('wiki_page_slugs_meta').on('wiki_page_slugs').columns(['wiki_page_meta_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('wiki_page_slugs').execute();
  await db.schema.dropTable('wiki_page_meta').execute();
}
