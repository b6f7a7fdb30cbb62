/**
 * id_tokens (OpenID Connect Core §2, §3.1.3.6): RS256, signed with the OIDC key and naming it by
 * `kid`; `iss` is exactly the discovery document's issuer, `aud` the client's uid, `exp` 120 s
 * after `iat` (the gem's default the Service keeps), `nonce` only when the authorization request
 * carried one, `auth_time` the user's current sign-in, `groups_direct` the full paths of the
 * user's direct group memberships (reference §8.4; an id_token-only claim).
 */
import { SignJWT } from 'jose';
import type { UserRow } from '../db/types.ts';
import { ID_TOKEN_EXPIRES_IN } from '../domain/oauth/policy.ts';
import { sharedClaims, type ClaimContext } from './claims.ts';
import type { SigningKey } from './keys.ts';

export interface IdTokenInput {
  user: UserRow;
  clientUid: string;
  scopes: string[];
  nonce: string | null;
  issuedAt: Date;
  /** Full paths of the groups the user is a direct member of. */
  groupsDirect: string[];
}

export async function signIdToken(key: SigningKey, ctx: ClaimContext & { issuer: string }, t: IdTokenInput): Promise<string> {
  const iat = Math.floor(t.issuedAt.getTime() / 1000);
  const authTime = t.user.current_sign_in_at ? Math.floor(Date.parse(t.user.current_sign_in_at) / 1000) : null;
  return new SignJWT({
    ...(t.nonce ? { nonce: t.nonce } : {}),
    ...(authTime !== null ? { auth_time: authTime } : {}),
    ...sharedClaims(t.user, t.scopes, ctx),
    groups_direct: t.groupsDirect,
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(ctx.issuer)
    .setSubject(String(t.user.id))
    .setAudience(t.clientUid)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ID_TOKEN_EXPIRES_IN)
    .sign(key.privateKey);
}
