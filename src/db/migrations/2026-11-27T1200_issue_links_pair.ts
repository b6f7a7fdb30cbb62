/**
 * Two issues are linked at most once, whichever way round (IssueLinks::CreateService refuses a
 * link whose reverse exists: "Issue(s) already assigned"). The (source, target) index of
 * 2026-11-27T1000 kept only one direction; this unique index on the unordered pair keeps both,
 * so two opposite links created at once cannot both be written.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const pair = isPostgres(db)
    ? sql`least(source_id, target_id), greatest(source_id, target_id)`
    : sql`min(source_id, target_id), max(source_id, target_id)`;
  await db.schema.createIndex('issue_links_pair').on('issue_links').unique().expression(pair).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('issue_links_pair').execute();
}
