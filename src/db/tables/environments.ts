/** Environments, deployments and the merge requests a deployment shipped (migration 2026-11-29T0400_environments). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface EnvironmentsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  /** Made from the name once (environment-slug.ts) and never changed. */
  slug: string;
  external_url: string | null;
  /** The folder: the part of the name before its first `/`, or null for a name without one. */
  environment_type: string | null;
  /** available, stopping or stopped. */
  state: string;
  /** production, staging, testing, development or other. */
  tier: string;
  auto_stop_at: string | null;
  /** When a stopped review app scheduled by DELETE …/environments/review_apps is deleted. */
  auto_delete_at: string | null;
  created_at: string;
  updated_at: string;
}
export type EnvironmentRow = Selectable<EnvironmentsTable>;

export interface DeploymentsTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  environment_id: number;
  ref: string;
  tag: Flag;
  sha: string;
  user_id: number | null;
  /** The CI job that deploys; null for a deployment made through the API. */
  deployable_id: number | null;
  /** The job that stops the environment (`environment:on_stop` of the deploying job). */
  on_stop: string | null;
  /** created, running, success, failed, canceled, skipped, blocked. */
  status: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}
export type DeploymentRow = Selectable<DeploymentsTable>;

export interface DeploymentMergeRequestsTable {
  deployment_id: number;
  merge_request_id: number;
}

declare module '../types.ts' {
  interface DB {
    environments: EnvironmentsTable;
    deployments: DeploymentsTable;
    deployment_merge_requests: DeploymentMergeRequestsTable;
  }
}
