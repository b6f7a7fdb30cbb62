/**
 * A group_saml identity goes with its SAML provider, as the Service's identities row goes with
 * its saml_providers row (a foreign key with ON DELETE CASCADE); the provider goes with its group
 * (migration 2026-11-24T1900_scim), so deleting a group leaves no identity naming a provider that
 * is gone. PostgreSQL adds the foreign key; SQLite cannot add one to an existing table, so a
 * trigger does the same there (SQLite runs triggers for the rows a cascade deletes too).
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table identities add constraint identities_saml_provider_fk
      foreign key (saml_provider_id) references saml_providers (id) on delete cascade`.execute(db);
  } else {
    await sql`create trigger identities_saml_provider_cascade after delete on saml_providers
      begin delete from identities where saml_provider_id = old.id; end`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`alter table identities drop constraint identities_saml_provider_fk`.execute(db);
  else await sql`drop trigger identities_saml_provider_cascade`.execute(db);
}
