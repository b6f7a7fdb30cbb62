/** Per-scope sequence counters (migration 2026-11-26T1700_internal_ids). */
import type { Generated } from 'kysely';

export interface InternalIdsTable {
  id: Generated<number>;
  /** The project whose sequence this is, or null for a namespace's. */
  project_id: number | null;
  /** The namespace (group) whose sequence this is, or null for a project's. */
  namespace_id: number | null;
  /** What is numbered: 'ci_pipelines' (src/domain/internal-ids/internal-ids.queries.ts). */
  usage: string;
  /** The last iid given; the next is one more. */
  last_value: number;
}

declare module '../types.ts' {
  interface DB { internal_ids: InternalIdsTable }
}
