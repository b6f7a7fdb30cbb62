/** Git writes in progress (migration 2026-11-22T1200_repository_writes). */
import type { Generated } from 'kysely';

export interface RepositoryWritesTable {
  id: Generated<number>;
  /** The storage-move container kind: 'project', 'snippet' or 'group' (a group's wiki). */
  container_type: string;
  container_id: number;
  started_at: string;
  /** After this the row no longer counts: its push has been ended by its time limit, or its process died. */
  expires_at: string;
  /** `<host>:<pid>` of the process serving the push, for operators. */
  owner: string;
}

declare module '../types.ts' {
  interface DB { repository_writes: RepositoryWritesTable }
}
