/**
 * Token secrets: generated from the CSPRNG, stored only as SHA-256 digests, compared in constant
 * time. Tokens are high-entropy, so a fast digest is enough (DESIGN, Stack: passwords).
 */
import crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A random token of `length` URL-safe characters (6 bits each). */
export function generateToken(length = 20): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] & 63];
  return out;
}

/** 64 hex characters, like the Service's OAuth tokens. */
export function generateHexToken(): string {
  return crypto.randomBytes(32).toString('hex');
}

export function digest(secret: string): string {
  // The one-shot form skips the Hash object: this runs on every authenticated request.
  return crypto.hash('sha256', secret, 'hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}
