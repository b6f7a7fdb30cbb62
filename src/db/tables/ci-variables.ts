/** Tables of CI/CD variables and trigger tokens (migration 2026-11-24T2100_ci_variables_triggers). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface CiVariablesTable {
  id: Generated<number>;
  /** The owning project; null for group and instance variables. */
  project_id: number | null;
  /** The owning group; null for project and instance variables. */
  group_id: number | null;
  key: string;
  /** AES-256-GCM ciphertext of the value (src/domain/ci-variables/encryption.ts). */
  encrypted_value: string;
  /** env_var or file. */
  variable_type: string;
  protected: Flag;
  masked: Flag;
  /** 1: the runner must not expand `$VAR` references in the value. */
  raw: Flag;
  /** `*` or an environment name pattern; always `*` for instance variables. */
  environment_scope: string;
  created_at: string;
  updated_at: string;
}
export type CiVariableRow = Selectable<CiVariablesTable>;

export interface CiPipelineVariablesTable {
  id: Generated<number>;
  pipeline_id: number;
  key: string;
  encrypted_value: string;
  variable_type: string;
}
export type CiPipelineVariableRow = Selectable<CiPipelineVariablesTable>;

export interface CiTriggersTable {
  id: Generated<number>;
  project_id: number;
  owner_id: number | null;
  description: string;
  /** SHA-256 digest of the token: how a token given to POST …/trigger/pipeline is found. */
  token_digest: string;
  /** The token itself, encrypted: the Service shows it in full to the trigger's owner on every read. */
  encrypted_token: string;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}
export type CiTriggerRow = Selectable<CiTriggersTable>;

declare module '../types.ts' {
  interface DB {
    ci_variables: CiVariablesTable;
    ci_pipeline_variables: CiPipelineVariablesTable;
    ci_triggers: CiTriggersTable;
  }
}
