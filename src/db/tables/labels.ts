/** Labels, their priorities and links, and milestones (migration 2026-11-27T1000_collaboration_core). */
import type { Generated, Selectable } from 'kysely';

export interface LabelsTable {
  id: Generated<number>;
  /** A project label's project; null for a group label. */
  project_id: number | null;
  /** A group label's group; null for a project label. */
  group_id: number | null;
  title: string;
  /** `#rrggbb`. */
  color: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}
export type LabelRow = Selectable<LabelsTable>;

export interface LabelPrioritiesTable {
  id: Generated<number>;
  project_id: number;
  label_id: number;
  priority: number;
}

export interface LabelLinksTable {
  id: Generated<number>;
  label_id: number;
  /** 'Issue' | 'MergeRequest'. */
  target_type: string;
  target_id: number;
  created_at: string;
  updated_at: string;
}

export interface MilestonesTable {
  id: Generated<number>;
  iid: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  description: string | null;
  /** 'active' | 'closed'. */
  state: string;
  due_date: string | null;
  start_date: string | null;
  created_at: string;
  updated_at: string;
}
export type MilestoneRow = Selectable<MilestonesTable>;

declare module '../types.ts' {
  interface DB {
    labels: LabelsTable;
    label_priorities: LabelPrioritiesTable;
    label_links: LabelLinksTable;
    milestones: MilestonesTable;
  }
}
