/**
 * Indexes for list filters that had none (issue 17; test/api/query-plans.test.ts finds them):
 * GET /personal_access_tokens by `revoked` and by `state` (revoked or expired), and GET /runners
 * (/all) by `paused` and by the `stale` scope, whose never-contacted branch filters on
 * `created_at`. Without them each of these walks the whole table for a page of matches.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('personal_access_tokens_revoked').on('personal_access_tokens').columns(['revoked', 'id']).execute();
  await db.schema.createIndex('personal_access_tokens_expires_at').on('personal_access_tokens').columns(['expires_at', 'id']).execute();
  await db.schema.createIndex('ci_runners_active').on('ci_runners').columns(['active', 'id']).execute();
  await db.schema.createIndex('ci_runners_created_at').on('ci_runners').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_runners_created_at').execute();
  await db.schema.dropIndex('ci_runners_active').execute();
  await db.schema.dropIndex('personal_access_tokens_expires_at').execute();
  await db.schema.dropIndex('personal_access_tokens_revoked').execute();
}
