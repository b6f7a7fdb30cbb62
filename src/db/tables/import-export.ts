/** Tables of the import and export area (migration 2026-11-30T0100_import_export). */
import type { Generated, Selectable } from 'kysely';

export interface ProjectExportsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number | null;
  /** 'queued' | 'started' | 'finished' | 'failed'. */
  status: string;
  description: string | null;
  upload_url: string | null;
  /** 'PUT' | 'POST'. */
  upload_method: string | null;
  /** The archive's file name under `<data dir>/exports/`; null until made. */
  file_name: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}
export type ProjectExportRow = Selectable<ProjectExportsTable>;

export interface GroupExportsTable {
  id: Generated<number>;
  group_id: number;
  user_id: number | null;
  status: string;
  file_name: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}
export type GroupExportRow = Selectable<GroupExportsTable>;

declare module '../types.ts' {
  interface DB {
    project_exports: ProjectExportsTable;
    group_exports: GroupExportsTable;
  }
}

declare module './projects.ts' {
  interface ProjectsTable {
    /** 'gitlab_project' for a project made from an export archive; null otherwise. */
    import_type: string | null;
    /** JSON list of the relations an import could not restore. */
    import_failed_relations: string | null;
  }
}
