/**
 * Hook and ProjectHook (the Service's API::Entities, 15.2): the token is never shown; the hook's
 * alert status (executable, temporarily_disabled, disabled) and the end of its back-off are
 * (API::Entities::Hook's alert_status and disabled_until).
 */
import { Type, type Static } from 'typebox';
import { alertStatus } from '../../domain/web-hooks/auto-disabling.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';

export const HookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  created_at: Type.String(),
  push_events: Type.Boolean(),
  tag_push_events: Type.Boolean(),
  merge_requests_events: Type.Boolean(),
  repository_update_events: Type.Boolean(),
  enable_ssl_verification: Type.Boolean(),
  alert_status: Type.Union([Type.Literal('executable'), Type.Literal('temporarily_disabled'), Type.Literal('disabled')]),
  disabled_until: Type.Union([Type.String(), Type.Null()]),
}, { title: 'Hook' });

export const ProjectHookSchema = Type.Object({
  ...HookSchema.properties,
  project_id: Type.Integer(),
  issues_events: Type.Boolean(),
  confidential_issues_events: Type.Boolean(),
  note_events: Type.Boolean(),
  confidential_note_events: Type.Boolean(),
  pipeline_events: Type.Boolean(),
  wiki_page_events: Type.Boolean(),
  deployment_events: Type.Boolean(),
  job_events: Type.Boolean(),
  releases_events: Type.Boolean(),
  push_events_branch_filter: Type.Union([Type.String(), Type.Null()]),
}, { title: 'ProjectHook' });

/** `autoDisabling`: whether web_hooks_disable_failed is on for the hook (its alert_status follows its failures only then). */
export function presentHook(row: WebHookRow, autoDisabling: boolean): Static<typeof HookSchema> {
  return {
    id: row.id, url: row.url, created_at: row.created_at, push_events: row.push_events === 1,
    tag_push_events: row.tag_push_events === 1, merge_requests_events: row.merge_requests_events === 1,
    repository_update_events: row.repository_update_events === 1, enable_ssl_verification: row.enable_ssl_verification === 1,
    alert_status: alertStatus(row, autoDisabling), disabled_until: row.disabled_until,
  };
}

export function presentProjectHook(row: WebHookRow, autoDisabling: boolean): Static<typeof ProjectHookSchema> {
  return {
    ...presentHook(row, autoDisabling), project_id: row.project_id!, issues_events: row.issues_events === 1,
    confidential_issues_events: row.confidential_issues_events === 1, note_events: row.note_events === 1,
    confidential_note_events: row.confidential_note_events === 1, pipeline_events: row.pipeline_events === 1,
    wiki_page_events: row.wiki_page_events === 1, deployment_events: row.deployment_events === 1, job_events: row.job_events === 1,
    releases_events: row.releases_events === 1, push_events_branch_filter: row.push_events_branch_filter,
  };
}
