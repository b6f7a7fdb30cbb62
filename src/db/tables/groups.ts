/**
 * Groups are `namespaces` rows of kind 'group'; migration 2026-11-22T1030_projects_groups adds the
 * fields of a group's wiki repository (and who created the group) to every namespace.
 */
import type { Generated } from 'kysely';
import type { Flag } from '../types.ts';

declare module '../types.ts' {
  interface NamespacesTable {
    /** Shard of the group wiki; null for personal namespaces. */
    repository_storage: string | null;
    /** The wiki repository relative to its shard (`<full path>.wiki.git`). */
    wiki_disk_path: string | null;
    read_only: Generated<Flag>;
    created_by_id: number | null;
  }
}
