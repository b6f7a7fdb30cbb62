/**
 * An issue list filtered by label reads the ids of the labels so titled once (issues.finder.ts
 * hasLabel): project, group and promoted labels of one title anywhere on the instance, which
 * without an index on the title alone is a scan of every label.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('labels_title').on('labels').column('title').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('labels_title').execute();
}
