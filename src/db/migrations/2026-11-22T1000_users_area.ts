/**
 * The users area: indexes behind the GET /users filters that the foundation did not index yet,
 * and the generic instance settings table (one JSON-encoded value per setting name) whose first
 * setting is `require_admin_approval_after_user_signup`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // GET /users filters (spec, Users): external / exclude_external, admins, two_factor, username
  // and the admin's exact-email search, saml_provider_id.
  await db.schema.createIndex('users_external').on('users').columns(['external', 'id']).execute();
  await db.schema.createIndex('users_admin').on('users').columns(['admin', 'id']).execute();
  await db.schema.createIndex('users_two_factor').on('users').columns(['otp_required_for_login', 'id']).execute();
  await db.schema.createIndex('users_username').on('users').columns(['username', 'id']).execute();
  await sql`create index users_public_email_lower on users (lower(public_email))`.execute(db);
  await db.schema.createIndex('identities_saml_provider').on('identities').columns(['saml_provider_id', 'user_id']).execute();

  await db.schema.createTable('application_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('application_settings').execute();
  for (const index of ['users_external', 'users_admin', 'users_two_factor', 'users_username', 'users_public_email_lower', 'identities_saml_provider']) {
    await db.schema.dropIndex(index).execute();
  }
}
