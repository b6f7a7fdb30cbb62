/**
 * The GPG signature of a commit checked against the GPG keys users stored (the Service's
 * Gitlab::Gpg::Commit, 15.2): the signature names its key by issuer fingerprint or key id; that
 * key (or the key whose subkey it is) is looked up among every user's keys, and then:
 *
 * - unknown_key: no stored key has that id;
 * - unverified_key: none of the key's email addresses is a verified email of its owner;
 * - unverified: the signature does not verify with the key (changed commit, wrong key);
 * - verified: the committer email is a verified address of the key;
 * - same_user_different_email: the committer email is another address of the key's owner;
 * - other_user: it is nobody's address of the key's owner.
 *
 * Verification is openpgp's (the library kiln already reads GPG keys with, DESIGN Stack): it
 * checks a detached signature over the commit object without its `gpgsig` header in process, with
 * no gpg binary, no temporary keyring and no child process per request.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { UserRow } from '../../db/types.ts';
import { runGitBytes } from '../repositories/git-bytes.ts';
import { findUserById, verifiedEmailsOf } from '../users/users.queries.ts';
import { findGpgKeyForIssuer, secondaryEmailsOf } from './gpg-keys.queries.ts';

let openpgpModule: Promise<typeof import('openpgp')> | null = null;
const loadOpenpgp = () => (openpgpModule ??= import('openpgp'));

/** A commit object larger than this is not read for its signature (no real commit comes near). */
const MAX_COMMIT_BYTES = 16 * 1024 * 1024;

export type VerificationStatus = 'verified' | 'unverified' | 'unverified_key' | 'unknown_key' | 'same_user_different_email' | 'other_user';

export interface CommitSignature {
  verificationStatus: VerificationStatus;
  gpgKeyId: number | null;
  gpgKeyPrimaryKeyid: string;
  gpgKeyUserName: string | null;
  gpgKeyUserEmail: string | null;
  gpgKeySubkeyId: number | null;
}

/** The armored PGP signature of a commit object and the bytes it signs, or null when it has none. */
export function splitSignedCommit(raw: Buffer): { signature: string; payload: Buffer } | null {
  const end = raw.indexOf('\n\n');
  const headerEnd = end === -1 ? raw.length : end + 1;
  const lines = raw.subarray(0, headerEnd).toString('latin1').split('\n');
  const kept: string[] = [];
  const sig: string[] = [];
  let inSig = false;
  for (const line of lines) {
    if (line.startsWith('gpgsig ')) {
      inSig = true;
      sig.push(line.slice('gpgsig '.length));
      continue;
    }
    if (inSig && line.startsWith(' ')) {
      sig.push(line.slice(1));
      continue;
    }
    inSig = false;
    kept.push(line);
  }
  if (sig.length === 0) return null;
  const signature = sig.join('\n');
  // X.509 and SSH signatures are not PGP; the Service 15.2 reads PGP signatures only through this entity.
  if (!signature.startsWith('-----BEGIN PGP SIGNATURE-----')) return null;
  const payload = Buffer.concat([Buffer.from(kept.join('\n'), 'latin1'), raw.subarray(headerEnd)]);
  return { signature, payload };
}

/** The commit's raw object (`git cat-file commit`); the id is a resolved commit id. */
export async function rawCommit(gitDir: string, commitId: string): Promise<Buffer> {
  return (await runGitBytes(['cat-file', 'commit', commitId], { gitDir, maxBytes: MAX_COMMIT_BYTES })).stdout;
}

/** The key's user ids as {name, email} (GpgKey#user_infos). */
async function userInfos(armored: string): Promise<{ name: string; email: string }[]> {
  const openpgp = await loadOpenpgp();
  const key = await openpgp.readKey({ armoredKey: armored });
  return key.users.flatMap((u) => (u.userID?.email ? [{ name: u.userID.name, email: u.userID.email.toLowerCase() }] : []));
}

/** null: the commit is not signed (with PGP), so there is no signature to show. */
export async function verifyCommitSignature(
  db: Kysely<DB>, gitDir: string, commit: { id: string; committerEmail: string },
): Promise<CommitSignature | null> {
  const parts = splitSignedCommit(await rawCommit(gitDir, commit.id));
  if (!parts) return null;
  const openpgp = await loadOpenpgp();
  let signature: Awaited<ReturnType<typeof openpgp.readSignature>>;
  try {
    signature = await openpgp.readSignature({ armoredSignature: parts.signature });
  } catch {
    return null;
  }
  const packet = signature.packets[0];
  if (!packet) return null;
  const issuer = packet.issuerFingerprint
    ? Buffer.from(packet.issuerFingerprint).toString('hex').toUpperCase()
    : packet.issuerKeyID.toHex().toUpperCase();
  const found = await findGpgKeyForIssuer(db, issuer);
  if (!found) {
    return {
      verificationStatus: 'unknown_key', gpgKeyId: null, gpgKeyPrimaryKeyid: issuer,
      gpgKeyUserName: null, gpgKeyUserEmail: null, gpgKeySubkeyId: null,
    };
  }
  const owner: UserRow | undefined = await findUserById(db, found.key.user_id);
  const verified = await verifiedEmailsOf(db, owner ?? null, undefined);
  const infos = await userInfos(found.key.key);
  const verifiedInfos = infos.filter((i) => verified.has(i.email));
  const info = verifiedInfos[0] ?? infos[0] ?? null;
  const base = {
    gpgKeyId: found.key.id, gpgKeyPrimaryKeyid: found.subkey?.keyid ?? found.key.primary_keyid,
    gpgKeyUserName: info?.name ?? null, gpgKeyUserEmail: info?.email ?? null, gpgKeySubkeyId: found.subkey?.id ?? null,
  };
  if (verifiedInfos.length === 0) return { ...base, verificationStatus: 'unverified_key' };
  let valid = false;
  try {
    const key = await openpgp.readKey({ armoredKey: found.key.key });
    const message = await openpgp.createMessage({ binary: new Uint8Array(parts.payload) });
    const result = await openpgp.verify({ message, signature, verificationKeys: key, format: 'binary' });
    await result.signatures[0]?.verified;
    valid = result.signatures.length > 0;
  } catch {
    valid = false;
  }
  if (!valid) return { ...base, verificationStatus: 'unverified' };
  const committer = commit.committerEmail.toLowerCase();
  if (verifiedInfos.some((i) => i.email === committer)) return { ...base, verificationStatus: 'verified' };
  const all = new Set([...verified, ...(owner ? [owner.email, owner.public_email, owner.commit_email] : [])]
    .flatMap((e) => (e ? [e.toLowerCase()] : [])));
  for (const e of owner ? await secondaryEmailsOf(db, owner.id) : []) all.add(e.email.toLowerCase());
  return { ...base, verificationStatus: all.has(committer) ? 'same_user_different_email' : 'other_user' };
}
