/** Tables of SCIM provisioning (migration 2026-11-24T1900_scim). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

/** A group's SAML provider: the id its group_saml identities carry, and new members' role. */
export interface SamlProvidersTable {
  id: Generated<number>;
  group_id: number;
  enabled: Generated<Flag>;
  default_membership_role: Generated<number>;
  created_at: string;
  updated_at: string;
}
export type SamlProviderRow = Selectable<SamlProvidersTable>;

/** A group's SCIM token, as a SHA-256 digest (one per group; a new one replaces it). */
export interface ScimTokensTable {
  id: Generated<number>;
  group_id: number;
  token_digest: string;
  created_at: string;
  updated_at: string;
}
export type ScimTokenRow = Selectable<ScimTokensTable>;

export interface ScimIdentitiesTable {
  id: Generated<number>;
  group_id: number;
  user_id: number;
  extern_uid: string;
  active: Generated<Flag>;
  provisioned_user: Generated<Flag>;
  created_at: string;
  updated_at: string;
}
export type ScimIdentityRow = Selectable<ScimIdentitiesTable>;

declare module '../types.ts' {
  interface DB {
    saml_providers: SamlProvidersTable;
    scim_tokens: ScimTokensTable;
    scim_identities: ScimIdentitiesTable;
  }
}
