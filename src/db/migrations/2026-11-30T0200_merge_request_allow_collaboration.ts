/**
 * A fork's merge request may let the target's members who can merge it push to its source
 * branch (the Service's merge_requests.allow_maintainer_to_push, `allow_collaboration` in the
 * API). 0 for every existing request, as the Service's default.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('merge_requests').addColumn('allow_collaboration', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('merge_requests').dropColumn('allow_collaboration').execute();
}
