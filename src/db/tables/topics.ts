/** Tables of the topics area (migration 2026-11-28T0820_topics). */
import type { Generated, Selectable } from 'kysely';

export interface TopicsTable {
  id: Generated<number>;
  name: string;
  title: string;
  description: string | null;
  /** Kept by triggers (migration 2026-11-28T0820): links, and links to non-private projects. */
  total_projects_count: Generated<number>;
  non_private_projects_count: Generated<number>;
  created_at: string;
  updated_at: string;
}
export type TopicRow = Selectable<TopicsTable>;

export interface ProjectTopicsTable {
  id: Generated<number>;
  project_id: number;
  topic_id: number;
}

declare module '../types.ts' {
  interface DB {
    topics: TopicsTable;
    project_topics: ProjectTopicsTable;
  }
}
