/** Personal snippets (migration 2026-11-22T1030_projects_groups). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface SnippetsTable {
  id: Generated<number>;
  title: string;
  description: string | null;
  /** The first file's path (repository order). */
  file_name: string;
  /** The first file's content (repository order), kept for raw reads. */
  content: string;
  /** JSON array of every file's path at the repository's tip; null: the one file `file_name` (migration 2026-11-27T0900). */
  file_paths: string | null;
  author_id: number;
  visibility_level: Generated<number>;
  repository_storage: string;
  /** Relative to the shard: `@snippets/<id>.git`. */
  disk_path: string;
  read_only: Generated<Flag>;
  /** The project of a project snippet; null for a personal snippet (migration 2026-11-27T1000). */
  project_id: Generated<number | null>;
  created_at: string;
  updated_at: string;
}
export type SnippetRow = Selectable<SnippetsTable>;

declare module '../types.ts' {
  interface DB {
    snippets: SnippetsTable;
  }
}
