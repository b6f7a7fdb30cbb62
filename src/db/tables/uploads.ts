/** Project uploads (migration 2026-11-29T0600_uploads). */
import type { Generated, Selectable } from 'kysely';

export interface ProjectUploadsTable {
  id: Generated<number>;
  project_id: number;
  /** 32 hex characters (FileUploader#secret), unique within the project. */
  secret: string;
  /** The sanitised file name the URL ends in. */
  filename: string;
  size: number;
  uploaded_by_id: number | null;
  created_at: string;
}
export type ProjectUploadRow = Selectable<ProjectUploadsTable>;

declare module '../types.ts' {
  interface DB {
    project_uploads: ProjectUploadsTable;
  }
}
