/** Tables of the forks area (migration 2026-11-29T0700_forks). */
import type { Selectable } from 'kysely';

export interface ProjectForksTable {
  /** The fork. */
  project_id: number;
  /** Its source; null once the source was deleted (the fork stays a fork). */
  forked_from_project_id: number | null;
  created_at: string;
}
export type ProjectForkRow = Selectable<ProjectForksTable>;

declare module '../types.ts' {
  interface DB {
    project_forks: ProjectForksTable;
  }
}
