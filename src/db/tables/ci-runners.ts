/** Tables of project and group runners (migration 2026-11-24T1610_project_group_runners). */
import type { Generated } from 'kysely';

export interface CiRunnerProjectsTable {
  id: Generated<number>;
  runner_id: number;
  project_id: number;
  created_at: string;
}

export interface CiRunnerRegistrationTokensTable {
  id: Generated<number>;
  /** 'Project' or 'Namespace' (a group), as members name their source. */
  source_type: string;
  source_id: number;
  /** SHA-256 digest of the registration token: how registration finds it. */
  token_digest: string;
  /**
   * The token sealed with the CI variables' key (migration 2026-11-26T1710), for the entities'
   * `runners_token`; null for a token made before it, which only a reset makes readable.
   */
  encrypted_token: Generated<string | null>;
  created_at: string;
}

declare module '../types.ts' {
  interface DB {
    ci_runner_projects: CiRunnerProjectsTable;
    ci_runner_registration_tokens: CiRunnerRegistrationTokensTable;
  }
}
