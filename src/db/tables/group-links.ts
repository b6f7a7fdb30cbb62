/** Tables of redirects and sharing (migrations 2026-11-29T0710_redirect_routes, 2026-11-29T0720_group_links). */
import type { Generated, Selectable } from 'kysely';

export interface RedirectRoutesTable {
  id: Generated<number>;
  project_id: number;
  /** The old full path (`group/project`). */
  path: string;
  created_at: string;
}

export interface ProjectGroupLinksTable {
  id: Generated<number>;
  project_id: number;
  group_id: number;
  group_access: number;
  /** `YYYY-MM-DD`; the link gives nothing from that day on. */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}
export type ProjectGroupLinkRow = Selectable<ProjectGroupLinksTable>;

export interface GroupGroupLinksTable {
  id: Generated<number>;
  shared_group_id: number;
  shared_with_group_id: number;
  group_access: number;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}
export type GroupGroupLinkRow = Selectable<GroupGroupLinksTable>;

declare module '../types.ts' {
  interface DB {
    redirect_routes: RedirectRoutesTable;
    project_group_links: ProjectGroupLinksTable;
    group_group_links: GroupGroupLinksTable;
  }
}
