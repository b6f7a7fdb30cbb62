/**
 * Releases as the Service 15.2 stores them: one release per tag of a project (a unique index, so
 * two creations at once cannot both win: "Release already exists"), its asset links (name and url
 * each unique within the release, index_release_links_on_release_id_and_name/_url), the milestones
 * it is associated with (milestone_releases) and the evidence collected when it was created
 * (release_evidences: the summary JSON and its digest). Lists are ordered by released_at or
 * created_at within a project, each with an index that ends in id for the tie-break.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('releases'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('sha', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('released_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('releases_project_tag').on('releases').columns(['project_id', 'tag']).unique().execute();
  await db.schema.createIndex('releases_project_released_at').on('releases').columns(['project_id', 'released_at', 'id']).execute();
  await db.schema.createIndex('releases_project_created_at').on('releases').columns(['project_id', 'created_at', 'id']).execute();

  await withId(db, db.schema.createTable('release_links'))
    .addColumn('release_id', 'integer', (c) => c.notNull().references('releases.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('filepath', 'text')
    .addColumn('link_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('release_links_release_name').on('release_links').columns(['release_id', 'name']).unique().execute();
  await db.schema.createIndex('release_links_release_url').on('release_links').columns(['release_id', 'url']).unique().execute();

  await db.schema.createTable('milestone_releases')
    .addColumn('milestone_id', 'integer', (c) => c.notNull().references('milestones.id').onDelete('cascade'))
    .addColumn('release_id', 'integer', (c) => c.notNull().references('releases.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('milestone_releases_pk', ['release_id', 'milestone_id'])
    .execute();
  await db.schema.createIndex('milestone_releases_milestone').on('milestone_releases').columns(['milestone_id']).execute();

  await withId(db, db.schema.createTable('release_evidences'))
    .addColumn('release_id', 'integer', (c) => c.notNull().references('releases.id').onDelete('cascade'))
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('summary_sha', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('release_evidences_release').on('release_evidences').columns(['release_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('release_evidences').execute();
  await db.schema.dropTable('milestone_releases').execute();
  await db.schema.dropTable('release_links').execute();
  await db.schema.dropTable('releases').execute();
}
