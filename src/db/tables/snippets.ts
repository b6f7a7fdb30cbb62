/** Personal snippets (migration 2026-11-22T1030_projects_groups). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface SnippetsTable {
  id: Generated<number>;
  title: string;
  description: string | null;
  file_name: string;
  /** The file as committed to the snippet's repository, kept for raw reads. */
  content: string;
  author_id: number;
  visibility_level: Generated<number>;
  repository_storage: string;
  /** Relative to the shard: `@snippets/<id>.git`. */
  disk_path: string;
  read_only: Generated<Flag>;
  created_at: string;
  updated_at: string;
}
export type SnippetRow = Selectable<SnippetsTable>;

declare module '../types.ts' {
  interface DB {
    snippets: SnippetsTable;
  }
}
