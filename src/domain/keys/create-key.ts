/**
 * Adding an SSH key to a user (the Service's Key model validations, reference §2.1): title
 * present and at most 255 characters; key present, of a supported algorithm, at most 5000
 * characters and parseable; its fingerprint unique across all users; not already expired.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { KeyRow, KeyUsageType } from '../../db/tables/keys.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { insertKey, sha256FingerprintTaken } from './keys.queries.ts';
import { hasSupportedAlgorithm, normalizeSshKey, parseSshPublicKey } from './ssh-public-key.ts';

export interface CreateKeyInput {
  userId: number;
  title: string;
  key: string;
  expiresAt: string | null;
  usageType: KeyUsageType;
}

export type CreateKeyResult = { ok: true; value: KeyRow } | { ok: false; errors: Record<string, string[]> };

const TAKEN = 'has already been taken';

export async function createKey(db: Kysely<DB>, input: CreateKeyInput, now: Date = new Date()): Promise<CreateKeyResult> {
  const errors = new ValidationErrors();
  const title = input.title.trim();
  if (title === '') errors.add('title', "can't be blank");
  else if (title.length > 255) errors.add('title', 'is too long (maximum is 255 characters)');

  const text = normalizeSshKey(input.key);
  if (text === '') errors.add('key', "can't be blank");
  else if (text.length > 5000) errors.add('key', 'is too long (maximum is 5000 characters)');
  if (!hasSupportedAlgorithm(text)) errors.add('key', 'is invalid');

  const parsed = text.length <= 5000 ? parseSshPublicKey(text) : null;
  if (!parsed) {
    if (!errors.has('key')) errors.add('key', 'is invalid');
    errors.add('fingerprint', 'cannot be generated');
  } else if (await sha256FingerprintTaken(db, parsed.fingerprintSha256)) {
    errors.add('fingerprint', TAKEN);
  }
  // Keys may not be added already expired (Key#expiration, on create).
  if (input.expiresAt !== null && input.expiresAt <= now.toISOString()) errors.add('key', 'has expired');
  if (!errors.empty || !parsed) return { ok: false, errors: errors.errors };

  try {
    const row = await insertKey(db, {
      userId: input.userId, title, key: text, keyType: parsed.type, bits: parsed.bits,
      fingerprint: parsed.fingerprintMd5, fingerprintSha256: parsed.fingerprintSha256,
      usageType: input.usageType, expiresAt: input.expiresAt,
    });
    return { ok: true, value: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, errors: { fingerprint: [TAKEN] } };
    throw err;
  }
}
