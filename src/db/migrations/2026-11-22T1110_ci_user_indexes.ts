/**
 * Pipelines and jobs by the user who started them: deleting a user re-points these rows at the
 * ghost user (or, on a hard delete, their foreign keys clear them), and both look the rows up by
 * `user_id`, which would otherwise scan the whole CI tables.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('ci_pipelines_user').on('ci_pipelines').columns(['user_id']).execute();
  await db.schema.createIndex('ci_builds_user').on('ci_builds').columns(['user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_builds_user').execute();
  await db.schema.dropIndex('ci_pipelines_user').execute();
}
