/**
 * DELETE /projects/:id/artifacts walks a project's artifacts in id order: index (project_id, id).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('ci_job_artifacts_project_id').on('ci_job_artifacts').columns(['project_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_job_artifacts_project_id').execute();
}
