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
  /** Failed answers in a row other than 500 (WebHook#failed!); past 3 the hook is disabled (migration 2026-11-30T0810). */
  recent_failures: Generated<number>;
  /** Back-offs in a row after 500 answers or request errors (WebHook#backoff!). */
  backoff_count: Generated<number>;
  /** Until when a backed-off hook is temporarily disabled. */
  disabled_until: string | null;
  created_at: string;
  updated_at: string;
}
export type WebHookRow = Selectable<WebHooksTable>;

/** One delivery attempt of a hook (migration 2026-11-30T0810_web_hook_logs). */
export interface WebHookLogsTable {
  id: Generated<number>;
  web_hook_id: number;
  /** The hook name of the event (push_hooks, issue_hooks, system_hooks, …). */
  trigger: string;
  /** The hook's URL, credentials masked. */
  url: string;
  /** JSON objects. */
  request_headers: string;
  request_data: string;
  response_headers: string;
  response_body: string;
  /** The answer's HTTP status, or "internal error" when none came. */
  response_status: string;
  /** Seconds. */
  execution_duration: number;
  internal_error_message: string | null;
  created_at: string;
  updated_at: string;
}
export type WebHookLogRow = Selectable<WebHookLogsTable>;

declare module '../types.ts' {
  interface DB {
    web_hooks: WebHooksTable;
    web_hook_logs: WebHookLogsTable;
  }
}
