/** SSH and GPG key tables (migration 2026-11-22T1010_keys_emails). */
import type { Generated, Selectable } from 'kysely';

export type KeyUsageType = 'auth' | 'signing' | 'auth_and_signing';

export interface KeysTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  key: string;
  key_type: string;
  bits: number;
  fingerprint: string;
  fingerprint_sha256: string;
  usage_type: Generated<KeyUsageType>;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
  /** 'Key' (a user's) or 'DeployKey' (migration 2026-11-28T1300_deploy_keys; user_id is its creator). */
  type: Generated<KeyType>;
  /** Deploy keys: 1 when any project's maintainer may enable it (DeployKey.are_public). */
  public: Generated<number>;
}
export type KeyRow = Selectable<KeysTable>;
export type KeyType = 'Key' | 'DeployKey';

export interface DeployKeysProjectsTable {
  id: Generated<number>;
  deploy_key_id: number;
  project_id: number;
  can_push: Generated<number>;
  created_at: string;
  updated_at: string;
}
export type DeployKeysProjectRow = Selectable<DeployKeysProjectsTable>;

export interface GpgKeysTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  fingerprint: string;
  primary_keyid: string;
  emails: Generated<string>;
  created_at: string;
  updated_at: string;
}
export type GpgKeyRow = Selectable<GpgKeysTable>;

export interface GpgKeySubkeysTable {
  id: Generated<number>;
  gpg_key_id: number;
  keyid: string;
  fingerprint: string;
}

declare module '../types.ts' {
  interface DB {
    keys: KeysTable;
    gpg_keys: GpgKeysTable;
    gpg_key_subkeys: GpgKeySubkeysTable;
    deploy_keys_projects: DeployKeysProjectsTable;
  }
}
