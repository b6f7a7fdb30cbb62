/**
 * Users, their namespaces, credentials (personal/impersonation tokens, OAuth tokens, sessions),
 * identities, follows, custom attributes, and instance secrets.
 *
 * Conventions for every table: timestamps are ISO-8601 UTC text ("2026-11-22T09:00:00.000Z"),
 * dates are "YYYY-MM-DD" text, booleans are 0/1 integers, scope lists are space-separated text.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
    // 0 human, 1 support_bot, 2 alert_bot, 4 service_user, 5 ghost, 6 project_bot … (reference §1.8)
    .addColumn('user_type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('external', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('encrypted_password', 'text')
    .addColumn('password_automatically_set', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('password_expires_at', 'text')
    .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('location', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('public_email', 'text')
    .addColumn('commit_email', 'text')
    .addColumn('skype', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('linkedin', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('twitter', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('discord', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('website_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('organization', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('job_title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('pronouns', 'text')
    .addColumn('timezone', 'text')
    .addColumn('private_profile', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('projects_limit', 'integer', (c) => c.notNull().defaultTo(100000))
    .addColumn('can_create_group', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('theme_id', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('color_scheme_id', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('note', 'text')
    .addColumn('avatar', 'text')
    .addColumn('confirmed_at', 'text')
    .addColumn('otp_required_for_login', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sign_in_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_at', 'text')
    .addColumn('current_sign_in_at', 'text')
    .addColumn('last_sign_in_at', 'text')
    .addColumn('current_sign_in_ip', 'text')
    .addColumn('last_sign_in_ip', 'text')
    .addColumn('last_activity_on', 'text')
    .addColumn('created_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Usernames and emails are unique without regard to case (reference §11).
  await sql`create unique index users_username_lower on users (lower(username))`.execute(db);
  await sql`create unique index users_email_lower on users (lower(email))`.execute(db);
  await db.schema.createIndex('users_state').on('users').columns(['state', 'id']).execute();
  await db.schema.createIndex('users_created_at').on('users').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('users_updated_at').on('users').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('users_name').on('users').columns(['name', 'id']).execute();
  await db.schema.createIndex('users_user_type').on('users').columns(['user_type', 'id']).execute();
  await db.schema.createIndex('users_last_activity_on').on('users').columns(['last_activity_on']).execute();

  await withId(db, db.schema.createTable('namespaces'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // 'user' | 'group'
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('parent_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(20))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Top-level paths share one space (user namespaces and root groups); sub-groups are unique
  // within their parent.
  await sql`create unique index namespaces_path_lower on namespaces (coalesce(parent_id, 0), lower(path))`.execute(db);
  await db.schema.createIndex('namespaces_owner').on('namespaces').columns(['owner_id', 'kind']).execute();

  await withId(db, db.schema.createTable('personal_access_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('impersonation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('personal_access_tokens_user').on('personal_access_tokens')
    .columns(['user_id', 'impersonation', 'id']).execute();

  await withId(db, db.schema.createTable('oauth_applications'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull().unique())
    .addColumn('secret_digest', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('trusted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_applications_owner').on('oauth_applications').columns(['owner_id', 'id']).execute();

  await withId(db, db.schema.createTable('oauth_access_tokens'))
    .addColumn('application_id', 'integer', (c) => c.references('oauth_applications.id').onDelete('cascade'))
    .addColumn('resource_owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('refresh_token_digest', 'text', (c) => c.unique())
    .addColumn('previous_refresh_token_digest', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_in', 'integer')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_access_tokens_owner').on('oauth_access_tokens')
    .columns(['resource_owner_id', 'application_id']).execute();

  await withId(db, db.schema.createTable('sessions'))
    .addColumn('session_digest', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id']).execute();

  await withId(db, db.schema.createTable('identities'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('extern_uid', 'text', (c) => c.notNull())
    .addColumn('saml_provider_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identities_user_provider').on('identities').columns(['user_id', 'provider']).unique().execute();
  await sql`create index identities_provider_uid on identities (provider, lower(extern_uid))`.execute(db);

  await db.schema.createTable('user_follows')
    .addColumn('follower_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('followee_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_follows_pk', ['follower_id', 'followee_id'])
    .execute();
  await db.schema.createIndex('user_follows_followee').on('user_follows').columns(['followee_id', 'follower_id']).execute();

  await withId(db, db.schema.createTable('user_custom_attributes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_custom_attributes_user_key').on('user_custom_attributes').columns(['user_id', 'key']).unique().execute();
  await db.schema.createIndex('user_custom_attributes_key_value').on('user_custom_attributes').columns(['key', 'value']).execute();

  await db.schema.createTable('app_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['app_secrets', 'user_custom_attributes', 'user_follows', 'identities', 'sessions',
    'oauth_access_tokens', 'oauth_applications', 'personal_access_tokens', 'namespaces', 'users']) {
    await db.schema.dropTable(t).execute();
  }
}
