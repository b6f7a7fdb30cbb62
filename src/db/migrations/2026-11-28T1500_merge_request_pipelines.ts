/**
 * Merge request pipelines (source `merge_request_event`): a pipeline names the merge request it
 * runs for (the Service's ci_pipelines.merge_request_id), so the request lists it and takes it as
 * its head pipeline, and its jobs get the CI_MERGE_REQUEST_* variables. The index serves
 * GET …/merge_requests/:iid/pipelines, newest first.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines')
    .addColumn('merge_request_id', 'integer', (c) => c.references('merge_requests.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('ci_pipelines_merge_request').on('ci_pipelines').columns(['merge_request_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_pipelines_merge_request').execute();
  await db.schema.alterTable('ci_pipelines').dropColumn('merge_request_id').execute();
}
