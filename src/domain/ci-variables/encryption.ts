/**
 * CI/CD variable values and trigger tokens are stored encrypted (issue 20: "values stored
 * encrypted at rest with a key under KILN_DATA_DIR"). AES-256-GCM from node:crypto: a 256-bit key
 * generated from the CSPRNG at first boot into KILN_DATA_DIR/keys/ci_variables.key (mode 0600,
 * beside the signing keys of src/oauth/keys.ts), a fresh 96-bit nonce per value (NIST SP 800-38D
 * §8.2.2), and the 128-bit tag checked on every read, so a tampered value fails instead of
 * decrypting to garbage.
 *
 * Stored form: `v1:` + base64(nonce ‖ tag ‖ ciphertext). The version prefix leaves room for a key
 * rotation. Several processes may boot on one data directory: the key file appears only whole, and
 * a loser of the race reads the winner's key (domain/instance/first-boot-files.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { readOrCreateFile } from '../instance/first-boot-files.ts';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'v1:';

const keys = new Map<string, Promise<Buffer>>();

async function readOrCreateKey(file: string): Promise<Buffer> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  return parseKey(await readOrCreateFile(file, () => `${crypto.randomBytes(KEY_BYTES).toString('hex')}\n`), file);
}

function parseKey(text: string, file: string): Buffer {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} is not a 256-bit hex key`);
  return Buffer.from(hex, 'hex');
}

/** The data directory's key, read (or made) once per process. */
export function variablesKey(dataDir: string): Promise<Buffer> {
  const file = path.join(path.resolve(dataDir), 'keys', 'ci_variables.key');
  let key = keys.get(file);
  if (!key) {
    key = readOrCreateKey(file);
    keys.set(file, key);
    key.catch(() => keys.delete(file));
  }
  return key;
}

export function encryptWith(key: Buffer, plaintext: string): string {
  const nonce = crypto.randomBytes(NONCE_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]).toString('base64');
}

export function decryptWith(key: Buffer, stored: string): string {
  if (!stored.startsWith(PREFIX)) throw new Error('unknown ciphertext format');
  const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
  decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** What the variable and trigger code holds: encrypt and decrypt with the data directory's key. */
export interface Sealer {
  seal(plaintext: string): string;
  open(stored: string): string;
}

export async function sealerFor(dataDir: string): Promise<Sealer> {
  const key = await variablesKey(dataDir);
  return { seal: (p) => encryptWith(key, p), open: (s) => decryptWith(key, s) };
}
