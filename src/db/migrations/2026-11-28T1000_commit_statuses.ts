/**
 * External CI statuses of commits (POST /projects/:id/statuses/:sha), stored as the Service
 * stores them: a generic commit status is a job row (ci_builds, type `generic`) of a pipeline,
 * with the two fields only it has, its link and its description (commit_statuses.target_url and
 * .description). Pipelines are found by commit (the statuses list, a commit's last pipeline, the
 * pipeline an external status joins) through (project_id, sha, id).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_builds').addColumn('target_url', 'text').execute();
  await db.schema.alterTable('ci_builds').addColumn('description', 'text').execute();
  await db.schema.createIndex('ci_pipelines_project_sha').on('ci_pipelines').columns(['project_id', 'sha', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_pipelines_project_sha').execute();
  await db.schema.alterTable('ci_builds').dropColumn('description').execute();
  await db.schema.alterTable('ci_builds').dropColumn('target_url').execute();
}
