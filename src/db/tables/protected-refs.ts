/** Protected branches and tags with their access levels (migration 2026-11-28T1100_protected_refs). */
import type { Generated, Selectable } from 'kysely';

export interface ProtectedBranchesTable {
  id: Generated<number>;
  project_id: number;
  /** A branch name or a wildcard pattern (`release-*`). */
  name: string;
  allow_force_push: Generated<number>;
  created_at: string;
  updated_at: string;
}
export type ProtectedBranchRow = Selectable<ProtectedBranchesTable>;

export interface ProtectedBranchAccessLevelsTable {
  id: Generated<number>;
  protected_branch_id: number;
  action: 'push' | 'merge';
  /** 0 no one, 30 developers and maintainers, 40 maintainers. */
  access_level: number;
  created_at: string;
  updated_at: string;
}
export type ProtectedBranchAccessLevelRow = Selectable<ProtectedBranchAccessLevelsTable>;

export interface ProtectedTagsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}
export type ProtectedTagRow = Selectable<ProtectedTagsTable>;

export interface ProtectedTagCreateAccessLevelsTable {
  id: Generated<number>;
  protected_tag_id: number;
  access_level: number;
  created_at: string;
  updated_at: string;
}
export type ProtectedTagCreateAccessLevelRow = Selectable<ProtectedTagCreateAccessLevelsTable>;

declare module '../types.ts' {
  interface DB {
    protected_branches: ProtectedBranchesTable;
    protected_branch_access_levels: ProtectedBranchAccessLevelsTable;
    protected_tags: ProtectedTagsTable;
    protected_tag_create_access_levels: ProtectedTagCreateAccessLevelsTable;
  }
}
