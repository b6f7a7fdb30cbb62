/**
 * The OAuth 2.0 provider: authorization codes (Doorkeeper's access grants) and the link from an
 * access token back to the code it was exchanged for, so that a replayed code can revoke every
 * token issued from it (RFC 6749 §4.1.2).
 *
 * Codes are stored only as SHA-256 digests, like tokens. `expires_in` is in seconds from
 * `created_at` (10 minutes, Doorkeeper's default). Sign-in lockout uses the foundation's
 * users.failed_attempts and users.locked_at.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('oauth_access_grants'))
    .addColumn('application_id', 'integer', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
    .addColumn('resource_owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_digest', 'text', (c) => c.notNull().unique())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('nonce', 'text')
    .addColumn('expires_in', 'integer', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_access_grants_owner').on('oauth_access_grants').columns(['resource_owner_id']).execute();
  await db.schema.createIndex('oauth_access_grants_application').on('oauth_access_grants').columns(['application_id']).execute();

  await db.schema.alterTable('oauth_access_tokens')
    .addColumn('grant_id', 'integer', (c) => c.references('oauth_access_grants.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('oauth_access_tokens_grant').on('oauth_access_tokens').columns(['grant_id']).execute();
  await db.schema.createIndex('oauth_access_tokens_previous_refresh').on('oauth_access_tokens')
    .columns(['previous_refresh_token_digest']).execute();
  await db.schema.createIndex('oauth_access_tokens_application').on('oauth_access_tokens').columns(['application_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['oauth_access_tokens_grant', 'oauth_access_tokens_previous_refresh', 'oauth_access_tokens_application']) {
    await db.schema.dropIndex(index).execute();
  }
  await db.schema.alterTable('oauth_access_tokens').dropColumn('grant_id').execute();
  await db.schema.dropTable('oauth_access_grants').execute();
}
