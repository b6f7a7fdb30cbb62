/** Tables of the OAuth provider beyond the foundation's (migration 2026-11-22T1040_oauth). */
import type { Generated, Selectable } from 'kysely';

/** Authorization codes (Doorkeeper's access grants); the code itself is kept only as a digest. */
export interface OauthAccessGrantsTable {
  id: Generated<number>;
  application_id: number;
  resource_owner_id: number;
  code_digest: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  /** 'plain' | 'S256', set when code_challenge is. */
  code_challenge_method: string | null;
  nonce: string | null;
  /** Seconds after created_at. */
  expires_in: number;
  revoked_at: string | null;
  created_at: string;
}
export type OauthAccessGrantRow = Selectable<OauthAccessGrantsTable>;

declare module '../types.ts' {
  interface DB {
    oauth_access_grants: OauthAccessGrantsTable;
  }
  interface OauthAccessTokensTable {
    /** The authorization code this token (or the token it was refreshed from) was issued for. */
    grant_id: number | null;
  }
}
