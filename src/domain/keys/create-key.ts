/**
 * Adding an SSH key to a user (the Service's Key model validations, reference §2.1): title
 * present and at most 255 characters; key present, of a supported algorithm, at most 5000
 * characters and parseable; its fingerprint unique across all users; not already expired; of a
 * type and size the instance's key restrictions allow.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { KeyRow, KeyUsageType } from '../../db/tables/keys.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { insertKey, sha256FingerprintTaken } from './keys.queries.ts';
import { hasSupportedAlgorithm, normalizeSshKey, parseSshPublicKey } from './ssh-public-key.ts';
import type { Settings } from '../settings/catalogue.ts';
import { currentSettings } from '../settings/settings.ts';

export interface CreateKeyInput {
  userId: number;
  title: string;
  key: string;
  expiresAt: string | null;
  usageType: KeyUsageType;
  /** A deploy key (DeployKey < Key: the same validations); `userId` is then its creator. */
  deployKey?: { public: boolean };
}

export type CreateKeyResult = { ok: true; value: KeyRow } | { ok: false; errors: Record<string, string[]> };

const TAKEN = 'has already been taken';

/** ApplicationSetting::SUPPORTED_KEY_TYPES and their settings (kiln parses the first four). */
const RESTRICTION = {
  rsa: 'rsa_key_restriction', dsa: 'dsa_key_restriction', ecdsa: 'ecdsa_key_restriction', ed25519: 'ed25519_key_restriction',
  ecdsa_sk: 'ecdsa_sk_key_restriction', ed25519_sk: 'ed25519_sk_key_restriction',
} as const satisfies Record<string, keyof Settings>;

/** Array#to_sentence with " or " (Gitlab::Utils.to_exclusive_sentence). */
function exclusiveSentence(words: string[]): string {
  if (words.length <= 2) return words.join(' or ');
  return `${words.slice(0, -1).join(', ')}, or ${words[words.length - 1]}`;
}

/**
 * Key#key_meets_restrictions over the instance's `<type>_key_restriction` settings: -1 forbids the
 * type, a positive value is the least size allowed.
 */
export function keyRestrictionError(settings: Settings, type: string, bits: number): string | null {
  if (!Object.hasOwn(RESTRICTION, type)) return null;
  const restriction = settings[RESTRICTION[type as keyof typeof RESTRICTION]];
  if (restriction === -1) {
    const allowed = Object.entries(RESTRICTION).filter(([, setting]) => settings[setting] !== -1).map(([t]) => t.toUpperCase());
    return `type is forbidden. Must be ${exclusiveSentence(allowed)}`;
  }
  return bits < restriction ? `must be at least ${restriction} bits` : null;
}

export async function createKey(db: Kysely<DB> | Transaction<DB>, input: CreateKeyInput, now: Date = new Date()): Promise<CreateKeyResult> {
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
  if (parsed) {
    const restriction = keyRestrictionError(await currentSettings(db), parsed.type, parsed.bits);
    if (restriction) errors.add('key', restriction);
  }
  if (!errors.empty || !parsed) return { ok: false, errors: errors.errors };

  try {
    const row = await insertKey(db, {
      userId: input.userId, title, key: text, keyType: parsed.type, bits: parsed.bits,
      fingerprint: parsed.fingerprintMd5, fingerprintSha256: parsed.fingerprintSha256,
      usageType: input.usageType, expiresAt: input.expiresAt,
      ...(input.deployKey ? { type: 'DeployKey' as const, public: input.deployKey.public } : {}),
    });
    return { ok: true, value: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, errors: { fingerprint: [TAKEN] } };
    throw err;
  }
}
