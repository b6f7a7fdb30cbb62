/** Every Kysely call of the SSH keys area. Small functions taking (db | trx, …). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { KeyRow, KeyType, KeyUsageType } from '../../db/tables/keys.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import type { FingerprintQuery } from './ssh-public-key.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A user's keys in id order (index keys_user). */
export function userKeysQuery(db: Db, userId: number) {
  // Deploy keys name their creator in user_id but are not the user's keys (User#keys is type Key).
  return db.selectFrom('keys').selectAll().where('user_id', '=', userId).where('type', '=', 'Key').orderBy('id');
}

export async function findUserKey(db: Db, userId: number, keyId: number): Promise<KeyRow | undefined> {
  if (!isStorableId(keyId)) return undefined;
  return db.selectFrom('keys').selectAll().where('user_id', '=', userId).where('id', '=', keyId).where('type', '=', 'Key')
    .executeTakeFirst();
}

export async function findKeyById(db: Db, id: number): Promise<KeyRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findKeyByFingerprint(db: Db, q: FingerprintQuery): Promise<KeyRow | undefined> {
  const column = q.kind === 'sha256' ? 'fingerprint_sha256' : 'fingerprint';
  return db.selectFrom('keys').selectAll().where(column, '=', q.value).orderBy('id').limit(1).executeTakeFirst();
}

export async function sha256FingerprintTaken(db: Db, fingerprintSha256: string): Promise<boolean> {
  const row = await db.selectFrom('keys').select('id').where('fingerprint_sha256', '=', fingerprintSha256).executeTakeFirst();
  return row !== undefined;
}

export interface NewKey {
  userId: number;
  title: string;
  key: string;
  keyType: string;
  bits: number;
  fingerprint: string;
  fingerprintSha256: string;
  usageType: KeyUsageType;
  expiresAt: string | null;
  /** 'DeployKey' for a deploy key (its creator in userId); a user's key otherwise. */
  type?: KeyType;
  public?: boolean;
}

export function insertKey(db: Db, k: NewKey): Promise<KeyRow> {
  const now = nowIso();
  return db.insertInto('keys').values({
    user_id: k.userId, title: k.title, key: k.key, key_type: k.keyType, bits: k.bits, fingerprint: k.fingerprint,
    fingerprint_sha256: k.fingerprintSha256, usage_type: k.usageType, expires_at: k.expiresAt, created_at: now, updated_at: now,
    type: k.type ?? 'Key', public: k.public ? 1 : 0,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteKey(db: Db, id: number): Promise<void> {
  await db.deleteFrom('keys').where('id', '=', id).execute();
}

/** Any key, a user's or a deploy key, by its SHA256 fingerprint (unique): who an SSH client is. */
export function findKeyBySha256(db: Db, fingerprintSha256: string): Promise<KeyRow | undefined> {
  return db.selectFrom('keys').selectAll().where('fingerprint_sha256', '=', fingerprintSha256).executeTakeFirst();
}

/** Key#update_last_used_at: at most once a day (the Service throttles it the same way). */
export async function touchKeyLastUsed(db: Db, id: number, now: Date = new Date()): Promise<void> {
  const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
  await db.updateTable('keys').set({ last_used_at: now.toISOString() }).where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', dayAgo)])).execute();
}
