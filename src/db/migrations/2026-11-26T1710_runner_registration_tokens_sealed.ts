/**
 * Project and group registration tokens kept sealed beside their digest (issue 35, item 12):
 * the Service shows a project's or group's `runners_token` to its Maintainers or Owners on every
 * read of the entity, so the token itself must be recoverable, as CI variable values are
 * (AES-256-GCM, src/domain/ci-variables/encryption.ts). The digest stays what registration looks
 * tokens up by.
 *
 * Tokens made before this migration were kept as digests only and cannot be recovered: their
 * rows keep a null `encrypted_token`, go on registering runners, and the entities show
 * `runners_token: null` for them until the token is reset (src/domain/runners/registration-token.ts).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_runner_registration_tokens').addColumn('encrypted_token', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_runner_registration_tokens').dropColumn('encrypted_token').execute();
}
