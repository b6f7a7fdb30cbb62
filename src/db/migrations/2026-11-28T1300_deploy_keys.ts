/**
 * Deploy keys (the Service's DeployKey, a Key with `type = 'DeployKey'`): they live in `keys` beside
 * users' keys so the one unique index on `fingerprint_sha256` keeps a deploy key from duplicating
 * a user's key and the other way round (Key validates its fingerprint's uniqueness over every
 * type). `user_id` is the key's creator. `deploy_keys_projects` enables a key on a project, once
 * per project, with `can_push`.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('keys').addColumn('type', 'text', (c) => c.notNull().defaultTo('Key')).execute();
  await db.schema.alterTable('keys').addColumn('public', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // GET /deploy_keys (all or public ones) in id order.
  await db.schema.createIndex('keys_type_public').on('keys').columns(['type', 'public', 'id']).execute();

  await withId(db, db.schema.createTable('deploy_keys_projects'))
    .addColumn('deploy_key_id', 'integer', (c) => c.notNull().references('keys.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('can_push', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_keys_projects_project_key').on('deploy_keys_projects')
    .columns(['project_id', 'deploy_key_id']).unique().execute();
  await db.schema.createIndex('deploy_keys_projects_key').on('deploy_keys_projects').columns(['deploy_key_id', 'project_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deploy_keys_projects').execute();
  await db.schema.dropIndex('keys_type_public').execute();
  await db.schema.alterTable('keys').dropColumn('public').execute();
  await db.schema.alterTable('keys').dropColumn('type').execute();
}
