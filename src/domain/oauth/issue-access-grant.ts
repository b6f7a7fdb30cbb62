/**
 * Issues an authorization code after the resource owner approved (or the application is trusted).
 * The code is 64 hex characters from the CSPRNG, valid AUTHORIZATION_CODE_EXPIRES_IN seconds,
 * bound to the client, redirect URI, scopes, PKCE challenge and nonce (RFC 9700 §4.5); only its
 * digest is stored.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { insertGrant } from './oauth.queries.ts';
import { AUTHORIZATION_CODE_EXPIRES_IN } from './policy.ts';

export interface GrantRequest {
  applicationId: number;
  resourceOwnerId: number;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'plain' | 'S256' | null;
  nonce: string | null;
}

export async function issueAccessGrant(db: Kysely<DB>, g: GrantRequest): Promise<string> {
  const code = generateHexToken();
  await insertGrant(db, {
    applicationId: g.applicationId, resourceOwnerId: g.resourceOwnerId, codeDigest: digest(code),
    redirectUri: g.redirectUri, scopes: g.scopes.join(' '), codeChallenge: g.codeChallenge,
    codeChallengeMethod: g.codeChallengeMethod, nonce: g.nonce, expiresIn: AUTHORIZATION_CODE_EXPIRES_IN,
  });
  return code;
}
