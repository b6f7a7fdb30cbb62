/**
 * Adding a GPG key to a user (the Service's GpgKey model, reference §2.2): the key present,
 * unique and one armored public key block; then, only when the key itself has no error, its
 * fingerprint and primary key id present (readable) and unique across users.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { GpgKeyRow } from '../../db/tables/keys.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { gpgKeysClashing, insertGpgKey } from './gpg-keys.queries.ts';
import { hasArmoredFormat, KEY_PREFIX, KEY_SUFFIX, parseGpgPublicKey } from './gpg-public-key.ts';

const TAKEN = 'has already been taken';
const BLANK = "can't be blank";
const FORMAT = `is invalid. A valid public GPG key begins with '${KEY_PREFIX}' and ends with '${KEY_SUFFIX}'`;

export type CreateGpgKeyResult = { ok: true; value: GpgKeyRow } | { ok: false; errors: Record<string, string[]> };

export async function createGpgKey(db: Kysely<DB>, userId: number, rawKey: string): Promise<CreateGpgKeyResult> {
  const armored = rawKey.trim();
  const errors = new ValidationErrors();
  if (armored === '') errors.add('key', BLANK);
  const parsed = hasArmoredFormat(armored) ? await parseGpgPublicKey(armored) : null;
  const clashes = parsed ? await gpgKeysClashing(db, parsed.fingerprint, parsed.primaryKeyid) : [];
  if (clashes.some((c) => c.key === armored)) errors.add('key', TAKEN);
  if (!hasArmoredFormat(armored)) errors.add('key', FORMAT);
  if (!errors.has('key')) {
    if (!parsed) {
      errors.add('fingerprint', BLANK);
      errors.add('primary_keyid', BLANK);
    } else {
      if (clashes.some((c) => c.fingerprint === parsed.fingerprint)) errors.add('fingerprint', TAKEN);
      if (clashes.some((c) => c.primary_keyid === parsed.primaryKeyid)) errors.add('primary_keyid', TAKEN);
    }
  }
  if (!errors.empty || !parsed) return { ok: false, errors: errors.errors };
  try {
    return { ok: true, value: await insertGpgKey(db, userId, armored, parsed) };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, errors: { fingerprint: [TAKEN], primary_keyid: [TAKEN] } };
    throw err;
  }
}
