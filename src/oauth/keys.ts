/**
 * The instance's RS256 signing keys, generated at first boot and kept under KILN_DATA_DIR/keys
 * (CONTRACT §2): `oidc.pem` signs id_tokens, `ci_jwt.pem` signs CI job JWTs. Both are published at
 * /oauth/discovery/keys, as the Service publishes its OIDC and CI keys (reference §8.3); every
 * JWT names its key by `kid`, the RFC 7638 thumbprint, because with two keys a client cannot
 * pick one otherwise.
 *
 * Several processes may boot on one data directory at once: a key file appears only whole, and a
 * loser of the race reads the winner's key (domain/instance/first-boot-files.ts).
 */
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { readOrCreateFile } from '../domain/instance/first-boot-files.ts';

const generateKeyPair = promisify(crypto.generateKeyPair);

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** The public half as published: {kty, kid, e, n, use, alg}. */
  jwk: JWK;
}

export interface SigningKeys {
  oidc: SigningKey;
  ci: SigningKey;
}

async function loadKey(file: string): Promise<SigningKey> {
  const pem = await readOrCreateFile(file, async () => {
    const pair = await generateKeyPair('rsa', { modulusLength: 2048 });
    return pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  });
  const privateKey = crypto.createPrivateKey(pem);
  const pub = crypto.createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint({ kty: 'RSA', e: pub.e, n: pub.n }, 'sha256');
  return { kid, privateKey, jwk: { kty: 'RSA', kid, e: pub.e, n: pub.n, use: 'sig', alg: 'RS256' } };
}

export async function loadSigningKeys(dataDir: string): Promise<SigningKeys> {
  const dir = path.join(dataDir, 'keys');
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const [oidc, ci] = await Promise.all([loadKey(path.join(dir, 'oidc.pem')), loadKey(path.join(dir, 'ci_jwt.pem'))]);
  return { oidc, ci };
}
