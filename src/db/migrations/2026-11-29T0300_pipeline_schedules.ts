/**
 * Pipeline schedules (issue 31, item 7; the Service's ci_pipeline_schedules,
 * ci_pipeline_schedule_variables and ci_pipelines.pipeline_schedule_id).
 *
 * - `next_run_at` is what the scheduler claims: a due schedule is taken by an UPDATE that moves
 *   next_run_at on only while it still holds the value read, so of several processes exactly one
 *   enqueues the run (src/domain/pipeline-schedules/scheduler.ts); `(active, next_run_at)`
 *   finds the due ones without reading the table.
 * - A variable's key is unique per schedule (the Service's uniqueness validation, here a unique
 *   index); values are stored only as ciphertext, as the other CI variables are.
 * - `ci_pipeline_schedule_plays` holds each user's last play of a schedule: the play rate limit
 *   (one a minute) is one conditional upsert, so it holds across processes.
 * - A pipeline names the schedule that made it; deleting the schedule keeps its pipelines
 *   (the Service nullifies them).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('ci_pipeline_schedules'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('cron_timezone', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_pipeline_schedules_project').on('ci_pipeline_schedules').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_pipeline_schedules_project_active').on('ci_pipeline_schedules').columns(['project_id', 'active', 'id']).execute();
  await db.schema.createIndex('ci_pipeline_schedules_due').on('ci_pipeline_schedules').columns(['active', 'next_run_at']).execute();
  await db.schema.createIndex('ci_pipeline_schedules_owner').on('ci_pipeline_schedules').columns(['owner_id']).execute();

  await withId(db, db.schema.createTable('ci_pipeline_schedule_variables'))
    .addColumn('pipeline_schedule_id', 'integer', (c) => c.notNull().references('ci_pipeline_schedules.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('encrypted_value', 'text', (c) => c.notNull())
    .addColumn('variable_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_pipeline_schedule_variables_key').on('ci_pipeline_schedule_variables')
    .columns(['pipeline_schedule_id', 'key']).unique().execute();

  await db.schema.createTable('ci_pipeline_schedule_plays')
    .addColumn('pipeline_schedule_id', 'integer', (c) => c.notNull().references('ci_pipeline_schedules.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('played_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('ci_pipeline_schedule_plays_pk', ['pipeline_schedule_id', 'user_id'])
    .execute();
  await db.schema.createIndex('ci_pipeline_schedule_plays_user').on('ci_pipeline_schedule_plays').columns(['user_id']).execute();

  await db.schema.alterTable('ci_pipelines')
    .addColumn('pipeline_schedule_id', 'integer', (c) => c.references('ci_pipeline_schedules.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('ci_pipelines_pipeline_schedule').on('ci_pipelines').columns(['pipeline_schedule_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ci_pipelines_pipeline_schedule').execute();
  await db.schema.alterTable('ci_pipelines').dropColumn('pipeline_schedule_id').execute();
  await db.schema.dropTable('ci_pipeline_schedule_plays').execute();
  await db.schema.dropTable('ci_pipeline_schedule_variables').execute();
  await db.schema.dropTable('ci_pipeline_schedules').execute();
}
