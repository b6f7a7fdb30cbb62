/**
 * What the OAuth endpoints share: the kiln context, the signing keys, and the issuer, which is
 * KILN_EXTERNAL_URL exactly as the discovery document and every id_token name it (clients compare
 * `iss` to the discovered issuer as strings).
 */
import type { KilnContext } from '../http/context.ts';
import type { SigningKeys } from './keys.ts';

export interface OAuthServer {
  ctx: KilnContext;
  keys: SigningKeys;
  issuer: string;
}
