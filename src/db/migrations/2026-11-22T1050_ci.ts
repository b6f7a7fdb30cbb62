/**
 * CI: pipelines, their jobs and bridges (one table, `type` tells them apart, as the Service's
 * ci_builds), job artifacts, and runners.
 *
 * Jobs reference their pipeline and project with cascading deletes, so removing a project removes
 * its CI rows with it. Tokens (runner and job) are stored only as SHA-256 digests. Indexes: one per
 * list order and filter (GET /projects/:id/jobs stays an index range scan on a 100k-job project:
 * project_id + id, and project_id + status + id for scopes), the runner queue (pending builds by
 * id), the sweeper (status + timestamps) and token lookups.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('ci_pipelines'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('before_sha', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('upstream_bridge_id', 'integer')
    .addColumn('config_path', 'text', (c) => c.notNull())
    .addColumn('commit_data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('ci_pipelines_project_iid').on('ci_pipelines').columns(['project_id', 'iid']).unique().execute();
  await db.schema.createIndex('ci_pipelines_project_id').on('ci_pipelines').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_pipelines_project_status').on('ci_pipelines').columns(['project_id', 'status', 'id']).execute();
  await db.schema.createIndex('ci_pipelines_project_ref').on('ci_pipelines').columns(['project_id', 'ref', 'id']).execute();
  await db.schema.createIndex('ci_pipelines_upstream_bridge').on('ci_pipelines').columns(['upstream_bridge_id']).execute();

  await withId(db, db.schema.createTable('ci_runners'))
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('maintenance_note', 'text')
    .addColumn('runner_type', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_untagged', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('tag_list', 'text', (c) => c.notNull())
    .addColumn('access_level', 'text', (c) => c.notNull())
    .addColumn('maximum_timeout', 'integer')
    .addColumn('name', 'text')
    .addColumn('version', 'text')
    .addColumn('revision', 'text')
    .addColumn('platform', 'text')
    .addColumn('architecture', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('contacted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_runners_type').on('ci_runners').columns(['runner_type', 'id']).execute();
  await db.schema.createIndex('ci_runners_contacted').on('ci_runners').columns(['contacted_at', 'id']).execute();

  await withId(db, db.schema.createTable('ci_builds'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('pipeline_id', 'integer', (c) => c.notNull().references('ci_pipelines.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('stage_idx', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('run_when', 'text', (c) => c.notNull())
    .addColumn('allow_failure', 'integer', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('runner_id', 'integer', (c) => c.references('ci_runners.id').onDelete('set null'))
    .addColumn('token_digest', 'text', (c) => c.unique())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('yaml_variables', 'text', (c) => c.notNull())
    .addColumn('job_variables', 'text', (c) => c.notNull())
    .addColumn('tag_list', 'text', (c) => c.notNull())
    .addColumn('needs', 'text')
    .addColumn('timeout', 'integer', (c) => c.notNull())
    .addColumn('retried', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('trace_size', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('downstream_pipeline_id', 'integer', (c) => c.references('ci_pipelines.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('queued_at', 'text')
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('erased_at', 'text')
    .addColumn('artifacts_expire_at', 'text')
    .execute();
  await db.schema.createIndex('ci_builds_project_type_id').on('ci_builds').columns(['project_id', 'type', 'id']).execute();
  await db.schema.createIndex('ci_builds_project_type_status').on('ci_builds').columns(['project_id', 'type', 'status', 'id']).execute();
  await db.schema.createIndex('ci_builds_pipeline').on('ci_builds').columns(['pipeline_id', 'id']).execute();
  await db.schema.createIndex('ci_builds_queue').on('ci_builds').columns(['status', 'type', 'id']).execute();
  await db.schema.createIndex('ci_builds_runner').on('ci_builds').columns(['runner_id', 'id']).execute();
  await db.schema.createIndex('ci_builds_downstream').on('ci_builds').columns(['downstream_pipeline_id']).execute();

  await withId(db, db.schema.createTable('ci_job_artifacts'))
    .addColumn('job_id', 'integer', (c) => c.notNull().references('ci_builds.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('file_format', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('file_path', 'text', (c) => c.notNull())
    .addColumn('expire_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_job_artifacts_job_type').on('ci_job_artifacts').columns(['job_id', 'file_type']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['ci_job_artifacts', 'ci_builds', 'ci_runners', 'ci_pipelines']) await db.schema.dropTable(t).execute();
}
