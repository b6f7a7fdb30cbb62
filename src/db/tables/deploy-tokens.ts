/** Deploy tokens (migration 2026-11-28T1600_deploy_tokens). */
import type { Generated, Selectable } from 'kysely';

export type DeployTokenType = 'project_type' | 'group_type';

export interface DeployTokensTable {
  id: Generated<number>;
  name: string;
  /** Null: the default `gitlab+deploy-token-<id>` (DeployToken#username). */
  username: string | null;
  token_digest: string;
  /** The secret sealed with the data directory's key, kept only for a `gitlab-deploy-token`. */
  token_sealed: string | null;
  /** ISO-8601 UTC; null never expires. */
  expires_at: string | null;
  revoked: Generated<number>;
  deploy_token_type: DeployTokenType;
  /** Space-separated. */
  scopes: string;
  project_id: number | null;
  group_id: number | null;
  creator_id: number | null;
  created_at: string;
}
export type DeployTokenRow = Selectable<DeployTokensTable>;

declare module '../types.ts' {
  interface DB {
    deploy_tokens: DeployTokensTable;
  }
}
