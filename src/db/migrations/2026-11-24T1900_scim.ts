/**
 * SCIM provisioning of a group's members (RFC 7644; the Service's group SCIM): the group's SAML
 * provider (whose id group_saml identities carry, and whose default role new members get), the
 * group's SCIM token (a SHA-256 digest only), and the SCIM identities that link an identity
 * provider's user (extern_uid) to a kiln user within one group, active or deprovisioned.
 *
 * identities: a user may hold one group_saml identity per SAML provider (the Service scopes its
 * identity uniqueness by provider and saml_provider_id), so the one-per-provider index becomes
 * one per (provider, saml_provider_id); and an extern_uid names one user per SAML provider.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('saml_providers'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    // Guest, the Service's default_membership_role.
    .addColumn('default_membership_role', 'integer', (c) => c.notNull().defaultTo(10))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('saml_providers_group').on('saml_providers').columns(['group_id']).unique().execute();

  await withId(db, db.schema.createTable('scim_tokens'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('scim_tokens_group').on('scim_tokens').columns(['group_id']).unique().execute();

  await withId(db, db.schema.createTable('scim_identities'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('extern_uid', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    // 1 when this group's provisioning created the account (the Service's provisioned_by_group):
    // only then may the group's identity provider change the account's name, username or email.
    .addColumn('provisioned_user', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // extern_uid matches without regard to case (the Service's ScimIdentity.with_extern_uid).
  await sql`create unique index scim_identities_group_uid on scim_identities (group_id, lower(extern_uid))`.execute(db);
  await db.schema.createIndex('scim_identities_group_user').on('scim_identities').columns(['group_id', 'user_id']).unique().execute();
  await db.schema.createIndex('scim_identities_group_id').on('scim_identities').columns(['group_id', 'id']).execute();
  await db.schema.createIndex('scim_identities_user').on('scim_identities').columns(['user_id']).execute();

  await db.schema.dropIndex('identities_user_provider').execute();
  await sql`create unique index identities_user_provider_saml on identities (user_id, provider, coalesce(saml_provider_id, 0))`.execute(db);
  await sql`create unique index identities_saml_provider_uid on identities (saml_provider_id, lower(extern_uid)) where saml_provider_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('identities_saml_provider_uid').execute();
  await db.schema.dropIndex('identities_user_provider_saml').execute();
  await db.schema.createIndex('identities_user_provider').on('identities').columns(['user_id', 'provider']).unique().execute();
  for (const t of ['scim_identities', 'scim_tokens', 'saml_providers']) await db.schema.dropTable(t).execute();
}
