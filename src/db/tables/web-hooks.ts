/** Webhooks: project and system hooks (migration 2026-11-29T0100_web_hooks). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export type WebHookType = 'ProjectHook' | 'SystemHook';

export interface WebHooksTable {
  id: Generated<number>;
  type: WebHookType;
  /** The project of a ProjectHook; null for a SystemHook. */
  project_id: number | null;
  url: string;
  /** The secret token sealed with the data directory's key (never returned by the API). */
  token_sealed: string | null;
  push_events: Generated<Flag>;
  tag_push_events: Generated<Flag>;
  issues_events: Generated<Flag>;
  confidential_issues_events: Generated<Flag>;
  merge_requests_events: Generated<Flag>;
  note_events: Generated<Flag>;
  confidential_note_events: Generated<Flag>;
  job_events: Generated<Flag>;
  pipeline_events: Generated<Flag>;
  wiki_page_events: Generated<Flag>;
  deployment_events: Generated<Flag>;
  releases_events: Generated<Flag>;
  repository_update_events: Generated<Flag>;
  enable_ssl_verification: Generated<Flag>;
  push_events_branch_filter: string | null;
  created_at: string;
  updated_at: string;
}
export type WebHookRow = Selectable<WebHooksTable>;

declare module '../types.ts' {
  interface DB {
    web_hooks: WebHooksTable;
  }
}
