/**
 * PKCE (RFC 7636), both methods Doorkeeper accepts: S256 and plain. The verifier must match the
 * RFC's ABNF (§4.1; spec rule 2: 43 to 128 of A-Z a-z 0-9 - . _ ~), and the comparison runs in
 * constant time.
 */
import crypto from 'node:crypto';
import { safeEqual } from '../domain/tokens/secret.ts';

export const CODE_CHALLENGE_METHODS = ['plain', 'S256'] as const;
export type CodeChallengeMethod = (typeof CODE_CHALLENGE_METHODS)[number];

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isCodeChallengeMethod(value: string): value is CodeChallengeMethod {
  return (CODE_CHALLENGE_METHODS as readonly string[]).includes(value);
}

/** BASE64URL(SHA256(ASCII(verifier))) without padding (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  return crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Whether `verifier` answers the challenge stored with a code. No challenge stored: only the
 * absence of a verifier is accepted, so a client cannot downgrade a PKCE exchange (RFC 9700
 * §4.8.2; Doorkeeper refuses too).
 */
export function verifierMatches(
  stored: { code_challenge: string | null; code_challenge_method: string | null },
  verifier: string | undefined,
): boolean {
  if (stored.code_challenge === null) return verifier === undefined;
  if (verifier === undefined || !VERIFIER.test(verifier)) return false;
  const computed = stored.code_challenge_method === 'S256' ? s256Challenge(verifier) : verifier;
  return safeEqual(computed, stored.code_challenge);
}
