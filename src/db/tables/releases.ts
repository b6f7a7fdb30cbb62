/** Releases, their asset links, milestones and evidence (migration 2026-11-28T1400_releases). */
import type { Generated, Selectable } from 'kysely';

export interface ReleasesTable {
  id: Generated<number>;
  project_id: number;
  /** The tag the release is of (unique within the project). */
  tag: string;
  name: string | null;
  description: string | null;
  author_id: number | null;
  /** The commit the tag pointed at when the release was created. */
  sha: string | null;
  created_at: string;
  updated_at: string;
  released_at: string;
}
export type ReleaseRow = Selectable<ReleasesTable>;

export interface ReleaseLinksTable {
  id: Generated<number>;
  release_id: number;
  name: string;
  url: string;
  /** `/path` of a direct asset link, or null. */
  filepath: string | null;
  /** 'other' | 'runbook' | 'package' | 'image'. */
  link_type: string;
  created_at: string;
  updated_at: string;
}
export type ReleaseLinkRow = Selectable<ReleaseLinksTable>;

export interface MilestoneReleasesTable {
  milestone_id: number;
  release_id: number;
}

export interface ReleaseEvidencesTable {
  id: Generated<number>;
  release_id: number;
  /** The evidence summary as JSON. */
  summary: string;
  summary_sha: string;
  created_at: string;
}
export type ReleaseEvidenceRow = Selectable<ReleaseEvidencesTable>;

declare module '../types.ts' {
  interface DB {
    releases: ReleasesTable;
    release_links: ReleaseLinksTable;
    milestone_releases: MilestoneReleasesTable;
    release_evidences: ReleaseEvidencesTable;
  }
}
