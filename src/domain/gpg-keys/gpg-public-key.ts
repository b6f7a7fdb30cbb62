/**
 * Armored OpenPGP public keys, read with openpgp: the primary key's fingerprint and key id (upper
 * -case hex, as the Service stores them), the email addresses of its user ids, and its subkeys.
 */
import type { Key } from 'openpgp';

// openpgp is 2.3 MB of source kept in memory once loaded: loaded on the first key added, not at
// boot (issue 17, item 5).
let openpgpModule: Promise<typeof import('openpgp')> | null = null;
const loadOpenpgp = () => (openpgpModule ??= import('openpgp'));

export const KEY_PREFIX = '-----BEGIN PGP PUBLIC KEY BLOCK-----';
export const KEY_SUFFIX = '-----END PGP PUBLIC KEY BLOCK-----';

export interface GpgPublicKey {
  fingerprint: string;
  primaryKeyid: string;
  emails: string[];
  subkeys: { keyid: string; fingerprint: string }[];
}

/** Exactly one public key block, nothing before or after it (the Service's format check). */
export function hasArmoredFormat(text: string): boolean {
  if (!text.startsWith(KEY_PREFIX) || !text.endsWith(KEY_SUFFIX)) return false;
  const inner = text.slice(KEY_PREFIX.length, text.length - KEY_SUFFIX.length);
  return inner.length > 0 && !inner.includes(KEY_PREFIX) && !inner.includes(KEY_SUFFIX);
}

/** Reads one armored public key; null when it is not one. */
export async function parseGpgPublicKey(armored: string): Promise<GpgPublicKey | null> {
  const openpgp = await loadOpenpgp();
  let key: Key;
  try {
    key = await openpgp.readKey({ armoredKey: armored });
  } catch {
    return null;
  }
  if (key.isPrivate()) return null;
  const emails = new Set<string>();
  for (const user of key.users) {
    const email = user.userID?.email;
    if (email) emails.add(email.toLowerCase());
  }
  return {
    fingerprint: key.getFingerprint().toUpperCase(),
    primaryKeyid: key.getKeyID().toHex().toUpperCase(),
    emails: [...emails],
    subkeys: key.subkeys.map((s) => ({ keyid: s.getKeyID().toHex().toUpperCase(), fingerprint: s.getFingerprint().toUpperCase() })),
  };
}
