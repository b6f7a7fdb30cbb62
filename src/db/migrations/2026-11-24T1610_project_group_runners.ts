/**
 * Project and group runners: a group runner names its group (ci_runners.group_id); a project
 * runner is enabled for one or more projects (ci_runner_projects, unique per pair). Projects and
 * groups register runners with their own registration token, kept only as a SHA-256 digest
 * (ci_runner_registration_tokens, one per project or group, each digest unique).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_runners')
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('ci_runners_group').on('ci_runners').columns(['group_id', 'id']).execute();

  await withId(db, db.schema.createTable('ci_runner_projects'))
    .addColumn('runner_id', 'integer', (c) => c.notNull().references('ci_runners.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_runner_projects_runner_project').on('ci_runner_projects').columns(['runner_id', 'project_id']).unique().execute();
  await db.schema.createIndex('ci_runner_projects_project').on('ci_runner_projects').columns(['project_id', 'runner_id']).execute();

  await withId(db, db.schema.createTable('ci_runner_registration_tokens'))
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_runner_registration_tokens_source').on('ci_runner_registration_tokens').columns(['source_type', 'source_id']).unique().execute();
  await db.schema.createIndex('ci_runner_registration_tokens_digest').on('ci_runner_registration_tokens').columns(['token_digest']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ci_runner_registration_tokens').execute();
  await db.schema.dropTable('ci_runner_projects').execute();
  await db.schema.dropIndex('ci_runners_group').execute();
  await db.schema.alterTable('ci_runners').dropColumn('group_id').execute();
}
