/**
 * SSH public keys in OpenSSH's one-line format: which algorithms the Service accepts, the
 * normalised text, the key's type and size, and its MD5 and SHA256 fingerprints (computed over the
 * key blob, as `ssh-keygen -l` does), parsed with sshpk.
 */
import sshpk from 'sshpk';

/** Gitlab::SSHPublicKey.supported_algorithms, less the FIDO `sk-` variants sshpk cannot read. */
export const SUPPORTED_ALGORITHMS = [
  'ssh-rsa', 'ssh-dss', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-ed25519',
] as const;

export interface SshPublicKey {
  /** "<algorithm> <base64>" without the comment. */
  publishable: string;
  /** sshpk's type: rsa, dsa, ecdsa, ed25519. */
  type: string;
  bits: number;
  /** "aa:bb:…" (16 pairs). */
  fingerprintMd5: string;
  /** "SHA256:<base64 without padding>". */
  fingerprintSha256: string;
}

/** Whitespace runs collapsed and the ends trimmed: a key pasted across lines reads as one. */
export function normalizeSshKey(text: string): string {
  return text.trim().split(/\s+/).join(' ');
}

/** The key text starts with an algorithm the Service knows (its model's format check). */
export function hasSupportedAlgorithm(text: string): boolean {
  const algorithm = normalizeSshKey(text).split(' ', 1)[0];
  return (SUPPORTED_ALGORITHMS as readonly string[]).includes(algorithm);
}

/** The algorithm name written inside the blob, which must agree with the text's prefix. */
function blobAlgorithm(blob: Buffer): string | null {
  if (blob.length < 4) return null;
  const len = blob.readUInt32BE(0);
  return len > 0 && len <= 64 && blob.length >= 4 + len ? blob.subarray(4, 4 + len).toString('latin1') : null;
}

/** Parses "<algorithm> <base64> [comment]"; null when it is not a valid public key. */
export function parseSshPublicKey(text: string): SshPublicKey | null {
  const [algorithm, base64] = normalizeSshKey(text).split(' ');
  if (!algorithm || !base64 || !(SUPPORTED_ALGORITHMS as readonly string[]).includes(algorithm)) return null;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  if (blobAlgorithm(Buffer.from(base64, 'base64')) !== algorithm) return null;
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(`${algorithm} ${base64}`, 'ssh');
  } catch {
    return null;
  }
  return {
    publishable: `${algorithm} ${base64}`,
    type: key.type,
    bits: key.size,
    fingerprintMd5: key.fingerprint('md5').toString('hex'),
    fingerprintSha256: key.fingerprint('sha256').toString('base64'),
  };
}

export type FingerprintQuery = { kind: 'sha256'; value: string } | { kind: 'md5'; value: string };

/**
 * A fingerprint as `GET /keys?fingerprint=` takes it (KeysFinder): "SHA256:<base64>" (either
 * case of the prefix) or MD5 "aa:bb:…"; null when malformed.
 */
export function parseFingerprintQuery(raw: string): FingerprintQuery | null {
  const m = /^sha256:(.+)$/i.exec(raw);
  if (m) {
    const b64 = m[1].replace(/=+$/, '');
    if (!/^[A-Za-z0-9+/]+$/.test(b64) || Buffer.from(b64, 'base64').length !== 32) return null;
    return { kind: 'sha256', value: `SHA256:${b64}` };
  }
  const parts = raw.split(':');
  if (parts.length !== 16 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return null;
  return { kind: 'md5', value: raw.toLowerCase() };
}
