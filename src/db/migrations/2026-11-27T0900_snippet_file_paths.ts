/**
 * Multi-file snippets (issue 35, item 11): the paths of every file at the tip of a snippet's
 * repository, as a JSON array in repository order, written with each commit the API makes (no
 * one pushes to a snippet's repository: src/git/repository-target.ts), so that presenting a page
 * of snippets needs no git process each. Null for a snippet written before: its one file is
 * `file_name`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('snippets').addColumn('file_paths', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('snippets').dropColumn('file_paths').execute();
}
