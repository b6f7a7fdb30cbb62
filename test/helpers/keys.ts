/** Real SSH and GPG public keys for tests, made fresh per call. */
import crypto from 'node:crypto';
import sshpk from 'sshpk';
import * as openpgp from 'openpgp';

/** An OpenSSH public key line, "<algorithm> <base64> <comment>". */
export function sshPublicKey(type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519', comment = 'someone@laptop'): string {
  const pair = type === 'rsa'
    ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
    : type === 'ecdsa' ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }) : crypto.generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(pair.publicKey.export({ type: 'spki', format: 'pem' }) as string, 'pem');
  return `${key.toString('ssh').split(' ').slice(0, 2).join(' ')} ${comment}`;
}

export function sshFingerprints(line: string): { md5: string; sha256: string } {
  const key = sshpk.parseKey(line, 'ssh');
  return { md5: key.fingerprint('md5').toString('hex'), sha256: key.fingerprint('sha256').toString('base64') };
}

/** An armored OpenPGP public key with the given user ids, and its fingerprint (upper-case hex). */
export async function gpgPublicKey(emails: string[] = ['someone@example.com']): Promise<{ armored: string; fingerprint: string; keyId: string }> {
  const { publicKey } = await openpgp.generateKey({
    type: 'ecc', curve: 'curve25519Legacy', userIDs: emails.map((email) => ({ name: 'Someone', email })), format: 'armored',
  });
  const key = await openpgp.readKey({ armoredKey: publicKey });
  return { armored: publicKey, fingerprint: key.getFingerprint().toUpperCase(), keyId: key.getKeyID().toHex().toUpperCase() };
}
