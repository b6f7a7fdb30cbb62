/** Project and group badges (migration 2026-11-29T0210_badges). */
import type { Generated, Selectable } from 'kysely';

export type BadgeType = 'ProjectBadge' | 'GroupBadge';

export interface BadgesTable {
  id: Generated<number>;
  link_url: string;
  image_url: string;
  name: string | null;
  type: BadgeType;
  project_id: number | null;
  group_id: number | null;
  created_at: string;
  updated_at: string;
}
export type BadgeRow = Selectable<BadgesTable>;

declare module '../types.ts' {
  interface DB {
    badges: BadgesTable;
  }
}
