/**
 * CI/CD variables at three levels (instance, group, project), the variables a pipeline was
 * created with, and pipeline trigger tokens (issue 20, items 3-5).
 *
 * One `ci_variables` table holds the three levels: `project_id` or `group_id` names the owner
 * (neither: an instance variable), each with a cascading foreign key so a removed project or group
 * takes its variables along. Key + environment scope is unique per owner as a unique expression
 * index (the Service's `validates :key, uniqueness: { scope: [owner, :environment_scope] }`, here a
 * database constraint); instance variables always have the scope `*`, so their keys are unique.
 * Values are stored only as AES-256-GCM ciphertext (src/domain/ci-variables/encryption.ts).
 *
 * Trigger tokens: the Service shows a trigger's full token to its owner on every read, so the
 * token is kept encrypted for that, and looked up by its SHA-256 digest (unique).
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('ci_variables'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('encrypted_value', 'text', (c) => c.notNull())
    .addColumn('variable_type', 'text', (c) => c.notNull())
    .addColumn('protected', 'integer', (c) => c.notNull())
    .addColumn('masked', 'integer', (c) => c.notNull())
    .addColumn('raw', 'integer', (c) => c.notNull())
    .addColumn('environment_scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_variables_owner_key_scope').on('ci_variables').unique()
    .expression(sql`coalesce(project_id, 0), coalesce(group_id, 0), key, environment_scope`).execute();
  // Lists by owner in key order, and the job payload's lookups by owner.
  await db.schema.createIndex('ci_variables_project').on('ci_variables').columns(['project_id', 'key', 'id']).execute();
  await db.schema.createIndex('ci_variables_group').on('ci_variables').columns(['group_id', 'key', 'id']).execute();

  await withId(db, db.schema.createTable('ci_pipeline_variables'))
    .addColumn('pipeline_id', 'integer', (c) => c.notNull().references('ci_pipelines.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('encrypted_value', 'text', (c) => c.notNull())
    .addColumn('variable_type', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_pipeline_variables_pipeline_key').on('ci_pipeline_variables').columns(['pipeline_id', 'key']).unique().execute();

  await withId(db, db.schema.createTable('ci_triggers'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('encrypted_token', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_triggers_project').on('ci_triggers').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_triggers_owner').on('ci_triggers').columns(['owner_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ci_triggers').execute();
  await db.schema.dropTable('ci_pipeline_variables').execute();
  await db.schema.dropTable('ci_variables').execute();
}
