/**
 * Runner registration tokens. The instance's (CONTRACT §2: KILN_RUNNER_REGISTRATION_TOKEN,
 * generated when unset) is kept only as a digest in application_settings and shown once, when it
 * is created at boot, like the root password. A project's or group's is kept as a digest and
 * sealed (issue 35, item 12), since the Service shows it on their entities to those who may
 * administer them.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {} from '../../db/tables/ci-runners.ts';
import { nowIso } from '../clock.ts';
import { digest, generateToken, safeEqual } from '../tokens/secret.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import {
  findRegistrationToken, findRegistrationTokenOwner, insertRegistrationTokenIfAbsent, replaceRegistrationToken,
  type StoredRegistrationToken,
} from './runners.queries.ts';

const SETTING = 'runners_registration_token_digest';

/** Creates the generated token on first boot; returns it then (to print), null on later boots. */
export async function ensureRegistrationToken(db: Kysely<DB>, configured: string | null): Promise<string | null> {
  if (configured !== null) return null;
  const existing = await db.selectFrom('application_settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  if (existing) return null;
  const token = generateToken(20);
  const inserted = await db.insertInto('application_settings').values({
    name: SETTING, value: JSON.stringify(digest(token)), updated_at: nowIso(),
  })
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
  const row = await findRegistrationTokenOwner(db, digest(given));
  if (!row) return null;
  return row.source_type === 'Project' ? { kind: 'project', projectId: row.source_id } : { kind: 'group', groupId: row.source_id };
}

/** A project's ('Project') or a group's ('Namespace') registration token. */
export type TokenSource = 'Project' | 'Namespace';

function newToken(sealer: Sealer, sourceType: TokenSource, sourceId: number): { token: string; stored: StoredRegistrationToken } {
  const token = `${REGISTRATION_TOKEN_PREFIX}${generateToken(20)}`;
  return { token, stored: { sourceType, sourceId, tokenDigest: digest(token), encryptedToken: sealer.seal(token) } };
}

/**
 * A new registration token for a project or group, replacing the old one (which stops working at
 * once). Kept as a digest, to register by, and sealed, for the entities' `runners_token`.
 */
export async function resetRegistrationToken(db: Kysely<DB>, sealer: Sealer, sourceType: TokenSource, sourceId: number): Promise<string> {
  const { token, stored } = newToken(sealer, sourceType, sourceId);
  await replaceRegistrationToken(db, stored);
  return token;
}

/**
 * The `runners_token` a project or group entity shows to those who may administer it. As the
 * Service's `ensure_runners_token!`, an owner that never had a token gets one on this first read
 * (two readers racing store one: the unique index keeps the first, and both read it back).
 *
 * A token made before tokens were sealed (migration 2026-11-26T1710) is known by its digest
 * only: it keeps registering runners, and this answers null until a reset makes a new one,
 * rather than replacing, unasked, a token someone may have written into a runner's set-up.
 */
export async function shownRegistrationToken(
  db: Kysely<DB>, sealer: Sealer, sourceType: TokenSource, sourceId: number,
): Promise<string | null> {
  let row = await findRegistrationToken(db, sourceType, sourceId);
  if (!row) {
    await insertRegistrationTokenIfAbsent(db, newToken(sealer, sourceType, sourceId).stored);
    row = await findRegistrationToken(db, sourceType, sourceId);
  }
  return row?.encrypted_token ? sealer.open(row.encrypted_token) : null;
}
