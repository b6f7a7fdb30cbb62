/**
 * The instance's runner registration token (CONTRACT §2: KILN_RUNNER_REGISTRATION_TOKEN, generated
 * when unset). A generated token is kept only as a digest in application_settings and shown once,
 * when it is created at boot, like the root password.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {} from '../../db/tables/ci-runners.ts';
import { nowIso } from '../clock.ts';
import { digest, generateToken, safeEqual } from '../tokens/secret.ts';

const SETTING = 'runners_registration_token_digest';

/** Creates the generated token on first boot; returns it then (to print), null on later boots. */
export async function ensureRegistrationToken(db: Kysely<DB>, configured: string | null): Promise<string | null> {
  if (configured !== null) return null;
  const existing = await db.selectFrom('application_settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  if (existing) return null;
  const token = generateToken(20);
  const inserted = await db.insertInto('application_settings').values({ name: SETTING, value: JSON.stringify(digest(token)), updated_at: nowIso() })
    .onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1 ? token : null;
}

export async function isRegistrationToken(db: Kysely<DB>, configured: string | null, given: string): Promise<boolean> {
  if (configured !== null) return safeEqual(configured, given);
  const row = await db.selectFrom('application_settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  return row !== undefined && safeEqual(JSON.parse(row.value) as string, digest(given));
}

/** The prefix the Service gives runner registration tokens (RunnersTokenPrefixable). */
export const REGISTRATION_TOKEN_PREFIX = 'GR1348941';

export type RegistrationOwner = { kind: 'instance' } | { kind: 'project'; projectId: number } | { kind: 'group'; groupId: number };

/** Whose registration token `given` is: the instance's, a project's or a group's; null for none. */
export async function registrationTokenOwner(db: Kysely<DB>, configured: string | null, given: string): Promise<RegistrationOwner | null> {
  if (await isRegistrationToken(db, configured, given)) return { kind: 'instance' };
  const row = await db.selectFrom('ci_runner_registration_tokens').select(['source_type', 'source_id'])
    .where('token_digest', '=', digest(given)).executeTakeFirst();
  if (!row) return null;
  return row.source_type === 'Project' ? { kind: 'project', projectId: row.source_id } : { kind: 'group', groupId: row.source_id };
}

/**
 * A new registration token for a project or group, replacing the old one (which stops working at
 * once); shown to the caller this once, kept as a digest.
 */
export async function resetRegistrationToken(db: Kysely<DB>, sourceType: 'Project' | 'Namespace', sourceId: number): Promise<string> {
  const token = `${REGISTRATION_TOKEN_PREFIX}${generateToken(20)}`;
  const tokenDigest = digest(token);
  await db.insertInto('ci_runner_registration_tokens')
    .values({ source_type: sourceType, source_id: sourceId, token_digest: tokenDigest, created_at: nowIso() })
    .onConflict((oc) => oc.columns(['source_type', 'source_id']).doUpdateSet({ token_digest: tokenDigest, created_at: nowIso() }))
    .execute();
  return token;
}
