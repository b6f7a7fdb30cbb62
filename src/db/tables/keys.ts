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
}
export type KeyRow = Selectable<KeysTable>;

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
  }
}
