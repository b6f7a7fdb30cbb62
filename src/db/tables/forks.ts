/** Tables of the forks area (migrations 2026-11-29T0700_forks, 2026-12-01T0110_fork_networks). */
import type { Generated, Selectable } from 'kysely';

export interface ProjectForksTable {
  /** The fork. */
  project_id: number;
  /** Its source; null once the source was deleted (the fork stays a fork). */
  forked_from_project_id: number | null;
  created_at: string;
}
export type ProjectForkRow = Selectable<ProjectForksTable>;

/** A fork network (migration 2026-12-01T0110): the family of a root and every fork below it. */
export interface ForkNetworksTable {
  id: Generated<number>;
  /** The project at the top; null once it was deleted (its forks stay one network). */
  root_project_id: number | null;
  created_at: string;
}

/** A project's membership of its fork network (the root is a member too). */
export interface ForkNetworkMembersTable {
  project_id: number;
  fork_network_id: number;
  created_at: string;
}

declare module '../types.ts' {
  interface DB {
    project_forks: ProjectForksTable;
    fork_networks: ForkNetworksTable;
    fork_network_members: ForkNetworkMembersTable;
  }
}
