/**
 * Users' SSH keys, GPG keys (with their subkeys) and secondary emails (spec, SSH keys, GPG keys,
 * Emails). Every list is by user in id order, so each table has a (user_id, id) index.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    // The key as sent, normalised to "<algorithm> <base64> [comment]"; the API shows it without
    // the comment (reference §2.1).
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('bits', 'integer', (c) => c.notNull())
    // MD5 "aa:bb:…" and "SHA256:<base64>" fingerprints of the key blob.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
    .addColumn('usage_type', 'text', (c) => c.notNull().defaultTo('auth_and_signing'))
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('keys_user').on('keys').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('keys_fingerprint_sha256').on('keys').columns(['fingerprint_sha256']).unique().execute();
  await db.schema.createIndex('keys_fingerprint').on('keys').columns(['fingerprint']).execute();

  await withId(db, db.schema.createTable('gpg_keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The armored block, stripped. Not indexed: armored keys outgrow a PostgreSQL btree entry;
    // the fingerprint identifies the key.
    .addColumn('key', 'text', (c) => c.notNull())
    // Upper-case hex, as the Service stores them.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('primary_keyid', 'text', (c) => c.notNull())
    // Lower-cased email addresses of the key's user ids, space-separated.
    .addColumn('emails', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('gpg_keys_user').on('gpg_keys').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('gpg_keys_fingerprint').on('gpg_keys').columns(['fingerprint']).unique().execute();
  await db.schema.createIndex('gpg_keys_primary_keyid').on('gpg_keys').columns(['primary_keyid']).unique().execute();

  // Signatures name the signing (sub)key by key id; commit verification looks them up here.
  await withId(db, db.schema.createTable('gpg_key_subkeys'))
    .addColumn('gpg_key_id', 'integer', (c) => c.notNull().references('gpg_keys.id').onDelete('cascade'))
    .addColumn('keyid', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('gpg_key_subkeys_key').on('gpg_key_subkeys').columns(['gpg_key_id']).execute();
  await db.schema.createIndex('gpg_key_subkeys_keyid').on('gpg_key_subkeys').columns(['keyid']).execute();

  await withId(db, db.schema.createTable('emails'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('confirmed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('emails_user').on('emails').columns(['user_id', 'id']).execute();
  // Emails are unique without regard to case, across users (reference §11).
  await sql`create unique index emails_email_lower on emails (lower(email))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['emails', 'gpg_key_subkeys', 'gpg_keys', 'keys']) await db.schema.dropTable(t).execute();
}
