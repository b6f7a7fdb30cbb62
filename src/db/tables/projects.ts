/** Tables of the projects area (migration 2026-11-22T1030_projects_groups). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface ProjectsTable {
  id: Generated<number>;
  name: string;
  path: string;
  namespace_id: number;
  creator_id: number | null;
  description: string | null;
  /** 0 private, 10 internal, 20 public. */
  visibility_level: Generated<number>;
  default_branch: string | null;
  /** Path of the README at the default branch's tip, when there is one. */
  readme_path: string | null;
  archived: Generated<Flag>;
  repository_storage: string;
  /** Relative to the shard, fixed at creation (e.g. `group/project.git`). */
  disk_path: string;
  read_only: Generated<Flag>;
  empty_repo: Generated<Flag>;
  pending_delete: Generated<Flag>;
  /** "Public pipelines": non-members may read jobs by visibility (migration 2026-11-24T1630). */
  public_builds: Generated<Flag>;
  /** `none`, or a fork's `scheduled` → `started` → `finished` | `failed` (migration 2026-11-29T0700_forks). */
  import_status: Generated<string>;
  import_error: string | null;
  /** The project whose repository this one borrows objects from (git alternates); null when self-contained. */
  objects_from_project_id: number | null;
  last_activity_at: string;
  created_at: string;
  updated_at: string;
}
export type ProjectRow = Selectable<ProjectsTable>;

export type MemberSourceType = 'Project' | 'Namespace';

export interface MembersTable {
  id: Generated<number>;
  source_type: MemberSourceType;
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: string | null;
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
}
export type MemberRow = Selectable<MembersTable>;

declare module '../types.ts' {
  interface DB {
    projects: ProjectsTable;
    members: MembersTable;
  }
}
