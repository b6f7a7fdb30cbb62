/**
 * Deploy tokens (the Service's DeployToken): a name, a username (null for the default
 * `gitlab+deploy-token-<id>`), the secret's SHA-256 digest (kiln keeps token secrets only as
 * digests, domain/tokens/secret.ts), a sealed copy only for a project's `gitlab-deploy-token`
 * (whose secret reaches its CI jobs as CI_DEPLOY_PASSWORD, as the Service reads its
 * token_encrypted), expiry, revocation, the type and the space-separated scopes.
 *
 * The holder is one project or one group (DeployToken#project/#group take the first of their join
 * rows: the Service limits a token to one holder), so it is a column here, cascading with its
 * holder as ProjectDeployToken and GroupDeployToken rows do.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('deploy_tokens'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('username', 'text')
    .addColumn('token_digest', 'text', (c) => c.notNull())
    .addColumn('token_sealed', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deploy_token_type', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('creator_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_tokens_token_digest').on('deploy_tokens').column('token_digest').unique().execute();
  // The holders' lists in id order, and a project's active `gitlab-deploy-token` for its jobs.
  await db.schema.createIndex('deploy_tokens_project').on('deploy_tokens').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('deploy_tokens_group').on('deploy_tokens').columns(['group_id', 'id']).execute();
  // GET /deploy_tokens?active=true.
  await db.schema.createIndex('deploy_tokens_revoked').on('deploy_tokens').columns(['revoked', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deploy_tokens').execute();
}
