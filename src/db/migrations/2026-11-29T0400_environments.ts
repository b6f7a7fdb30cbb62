/**
 * Environments and deployments (issue 31, item 8; the Service's Environment, Deployment and
 * DeploymentMergeRequest models).
 *
 * An environment is a project's named place to deploy to: its name and slug are unique in the
 * project (both looked up by CI jobs), `environment_type` is the folder of a `review/…` name
 * (Environment#set_environment_type, the review_apps folder), `state` is available, stopping or
 * stopped, `auto_stop_at` comes from `environment:auto_stop_in` of the last deployment.
 *
 * A deployment is numbered per project (`iid`, through internal_ids) and belongs to one
 * environment; `deployable_id` is the CI job that deploys (null for one made through the API), and
 * `on_stop` the name of the job that stops the environment it deployed.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('environments'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('external_url', 'text')
    .addColumn('environment_type', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('auto_stop_at', 'text')
    .addColumn('auto_delete_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('environments_project_name').on('environments').columns(['project_id', 'name']).unique().execute();
  await db.schema.createIndex('environments_project_slug').on('environments').columns(['project_id', 'slug']).unique().execute();
  // GET /projects/:id/environments?states=…, and stop_stale's available ones.
  await db.schema.createIndex('environments_project_state').on('environments').columns(['project_id', 'state', 'id']).execute();
  // DELETE …/environments/review_apps: the stopped ones of the review folder.
  await db.schema.createIndex('environments_project_type').on('environments').columns(['project_id', 'environment_type', 'id']).execute();
  // The sweep (workers/ci-sweeper.ts) stopping environments past auto_stop_at and deleting review apps past auto_delete_at.
  await db.schema.createIndex('environments_auto_stop_at').on('environments').columns(['auto_stop_at']).execute();
  await db.schema.createIndex('environments_auto_delete_at').on('environments').columns(['auto_delete_at']).execute();

  await withId(db, db.schema.createTable('deployments'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'integer', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', (c) => c.notNull())
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('deployable_id', 'integer', (c) => c.references('ci_builds.id').onDelete('set null'))
    .addColumn('on_stop', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('deployments_project_iid').on('deployments').columns(['project_id', 'iid']).unique().execute();
  // One deployment per deploying job (Seed::Deployment makes it with the job).
  await db.schema.createIndex('deployments_deployable').on('deployments').column('deployable_id').unique().execute();
  await db.schema.createIndex('deployments_environment').on('deployments').columns(['environment_id', 'status', 'id']).execute();
  // GET /projects/:id/deployments: its orders and filters.
  await db.schema.createIndex('deployments_project_id').on('deployments').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('deployments_project_status').on('deployments').columns(['project_id', 'status', 'id']).execute();
  await db.schema.createIndex('deployments_project_created').on('deployments').columns(['project_id', 'created_at']).execute();
  await db.schema.createIndex('deployments_project_updated').on('deployments').columns(['project_id', 'updated_at']).execute();
  await db.schema.createIndex('deployments_project_ref').on('deployments').columns(['project_id', 'ref']).execute();

  await db.schema.createTable('deployment_merge_requests')
    .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('deployment_merge_requests_pkey', ['deployment_id', 'merge_request_id'])
    .execute();
  await db.schema.createIndex('deployment_merge_requests_mr').on('deployment_merge_requests').column('merge_request_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deployment_merge_requests').execute();
  await db.schema.dropTable('deployments').execute();
  await db.schema.dropTable('environments').execute();
}
