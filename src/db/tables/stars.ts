/** Tables of the stars area (migration 2026-11-28T0810_project_stars). */
import type { Generated, Selectable } from 'kysely';

export interface UsersStarProjectsTable {
  id: Generated<number>;
  user_id: number;
  project_id: number;
  created_at: string;
}
export type UsersStarProjectRow = Selectable<UsersStarProjectsTable>;

declare module '../types.ts' {
  interface DB {
    users_star_projects: UsersStarProjectsTable;
  }
}
