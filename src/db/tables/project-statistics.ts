/** Project statistics, daily fetch counts, housekeeping leases (migration 2026-11-29T0820_project_statistics_housekeeping). */
import type { Selectable } from 'kysely';

type Big = number | string;

export interface ProjectStatisticsTable {
  project_id: number;
  commit_count: Big;
  storage_size: Big;
  repository_size: Big;
  wiki_size: Big;
  lfs_objects_size: Big;
  /** The entity's job_artifacts_size. */
  build_artifacts_size: Big;
  pipeline_artifacts_size: Big;
  packages_size: Big;
  snippets_size: Big;
  uploads_size: Big;
  updated_at: string;
}
export type ProjectStatisticsRow = Selectable<ProjectStatisticsTable>;

export interface ProjectDailyStatisticsTable {
  project_id: number;
  /** YYYY-MM-DD (UTC). */
  date: string;
  fetch_count: number;
}

export interface ProjectHousekeepingTable {
  project_id: number;
  /** No new housekeeping before this time (ISO-8601 UTC). */
  leased_until: string;
  last_run_at: string | null;
}

declare module '../types.ts' {
  interface DB {
    project_statistics: ProjectStatisticsTable;
    project_daily_statistics: ProjectDailyStatisticsTable;
    project_housekeeping: ProjectHousekeepingTable;
  }
}
