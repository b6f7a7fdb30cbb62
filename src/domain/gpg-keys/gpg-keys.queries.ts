/** Every Kysely call of the GPG keys area. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { GpgKeyRow } from '../../db/tables/keys.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import type { GpgPublicKey } from './gpg-public-key.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A user's GPG keys in id order (index gpg_keys_user). */
export function userGpgKeysQuery(db: Db, userId: number) {
  return db.selectFrom('gpg_keys').selectAll().where('user_id', '=', userId).orderBy('id');
}

export async function findUserGpgKey(db: Db, userId: number, keyId: number): Promise<GpgKeyRow | undefined> {
  if (!isStorableId(keyId)) return undefined;
  return db.selectFrom('gpg_keys').selectAll().where('user_id', '=', userId).where('id', '=', keyId).executeTakeFirst();
}

/** Keys that share the fingerprint or the primary key id (both unique indexes). */
export function gpgKeysClashing(db: Db, fingerprint: string, primaryKeyid: string) {
  return db.selectFrom('gpg_keys').select(['key', 'fingerprint', 'primary_keyid'])
    .where((eb) => eb.or([eb('fingerprint', '=', fingerprint), eb('primary_keyid', '=', primaryKeyid)]))
    .execute();
}

/** The key and its subkeys, in one transaction. */
export function insertGpgKey(db: Kysely<DB>, userId: number, armored: string, parsed: GpgPublicKey): Promise<GpgKeyRow> {
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    const row = await trx.insertInto('gpg_keys').values({
      user_id: userId, key: armored, fingerprint: parsed.fingerprint, primary_keyid: parsed.primaryKeyid,
      emails: parsed.emails.join(' '), created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    if (parsed.subkeys.length > 0) {
      await trx.insertInto('gpg_key_subkeys')
        .values(parsed.subkeys.map((s) => ({ gpg_key_id: row.id, keyid: s.keyid, fingerprint: s.fingerprint })))
        .execute();
    }
    return row;
  });
}

/** Removes the key; its subkeys go with it (foreign key cascade). */
export async function deleteGpgKey(db: Db, id: number): Promise<void> {
  await db.deleteFrom('gpg_keys').where('id', '=', id).execute();
}

/**
 * The stored key a signature names, by the issuer's fingerprint (40 hex) or key id (16 hex):
 * a primary key, else a subkey with its key (Gitlab::Gpg::Commit#find_gpg_key). Subkeys are found
 * by key id (gpg_key_subkeys_keyid), their fingerprint compared after.
 */
export async function findGpgKeyForIssuer(
  db: Db, issuer: string,
): Promise<{ key: GpgKeyRow; subkey: { id: number; keyid: string } | null } | undefined> {
  const byFingerprint = issuer.length > 16;
  const keyid = issuer.slice(-16);
  const key = byFingerprint
    ? await db.selectFrom('gpg_keys').selectAll().where('fingerprint', '=', issuer).executeTakeFirst()
    : await db.selectFrom('gpg_keys').selectAll().where('primary_keyid', '=', keyid).executeTakeFirst();
  if (key) return { key, subkey: null };
  const subkeys = await db.selectFrom('gpg_key_subkeys').selectAll().where('keyid', '=', keyid).execute();
  const subkey = subkeys.find((s) => !byFingerprint || s.fingerprint === issuer);
  if (!subkey) return undefined;
  const parent = await db.selectFrom('gpg_keys').selectAll().where('id', '=', subkey.gpg_key_id).executeTakeFirst();
  return parent ? { key: parent, subkey: { id: subkey.id, keyid: subkey.keyid } } : undefined;
}

/** A user's secondary emails with whether each is confirmed (index emails_user or its like). */
export function secondaryEmailsOf(db: Db, userId: number) {
  return db.selectFrom('emails').select(['email', 'confirmed_at']).where('user_id', '=', userId).execute();
}
