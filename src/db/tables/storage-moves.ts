/** Repository storage moves (migration 2026-11-22T1100_storage_moves; reference §4). */
import type { Generated, Selectable } from 'kysely';

interface MoveColumns {
  id: Generated<number>;
  /** initial=1, scheduled=2, started=3, finished=4, failed=5, replicated=6, cleanup_failed=7. */
  state: Generated<number>;
  source_storage_name: string;
  destination_storage_name: string;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectRepositoryStorageMovesTable extends MoveColumns { project_id: number }
export interface SnippetRepositoryStorageMovesTable extends MoveColumns { snippet_id: number }
export interface GroupRepositoryStorageMovesTable extends MoveColumns { group_id: number }

/** A move of any kind, with its container's id under one name. */
export interface StorageMoveRow extends Selectable<MoveColumns> {
  container_id: number;
}

declare module '../types.ts' {
  interface DB {
    project_repository_storage_moves: ProjectRepositoryStorageMovesTable;
    snippet_repository_storage_moves: SnippetRepositoryStorageMovesTable;
    group_repository_storage_moves: GroupRepositoryStorageMovesTable;
  }
}
