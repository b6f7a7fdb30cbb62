/**
 * What a pipeline keeps of its configuration's `workflow:` (issue 28, item 4; keywords the Service
 * added after 15.2): `name` (workflow:name with its variables expanded, at most 255 characters,
 * the Service's ci_pipeline_metadata.name, shown as the pipeline's `name`) and the
 * `workflow:auto_cancel` settings `on_new_commit` (conservative, interruptible, none) and
 * `on_job_failure` (none, all), null where the configuration does not say.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines').addColumn('name', 'text').execute();
  await db.schema.alterTable('ci_pipelines').addColumn('auto_cancel_on_new_commit', 'text').execute();
  await db.schema.alterTable('ci_pipelines').addColumn('auto_cancel_on_job_failure', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines').dropColumn('auto_cancel_on_job_failure').execute();
  await db.schema.alterTable('ci_pipelines').dropColumn('auto_cancel_on_new_commit').execute();
  await db.schema.alterTable('ci_pipelines').dropColumn('name').execute();
}
