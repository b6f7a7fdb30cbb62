/** Project integrations (migration 2026-11-29T1200_integrations). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface IntegrationsTable {
  id: Generated<number>;
  project_id: number;
  /** The integration's kind, as its API slug ('asana', 'emails-on-push'). */
  type: string;
  active: Generated<Flag>;
  push_events: Generated<Flag>;
  issues_events: Generated<Flag>;
  merge_requests_events: Generated<Flag>;
  tag_push_events: Generated<Flag>;
  note_events: Generated<Flag>;
  confidential_note_events: Generated<Flag>;
  commit_events: Generated<Flag>;
  confidential_issues_events: Generated<Flag>;
  pipeline_events: Generated<Flag>;
  wiki_page_events: Generated<Flag>;
  job_events: Generated<Flag>;
  /** Migration 2026-11-30T0800_integrations_deployment_events. */
  deployment_events: Generated<Flag>;
  comment_on_event_enabled: Generated<Flag>;
  /** Settings without secrets, as JSON text. */
  properties: Generated<string>;
  /** The secret settings as JSON text sealed with the data directory's key; never returned by the API. */
  secrets_sealed: string | null;
  created_at: string;
  updated_at: string;
}
export type IntegrationRow = Selectable<IntegrationsTable>;

declare module '../types.ts' {
  interface DB {
    integrations: IntegrationsTable;
  }
}
