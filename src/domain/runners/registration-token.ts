/**
 * The instance's runner registration token (CONTRACT §2: KILN_RUNNER_REGISTRATION_TOKEN, generated
 * when unset). A generated token is kept only as a digest in application_settings and shown once,
 * when it is created at boot, like the root password.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
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
