/**
 * ProjectIntegrationBasic and ProjectIntegration (the Service's API::Entities, 15.2): the
 * integration's kind, state and event flags, and for one integration its settings without the
 * secret ones (the entity's `properties` exposure leaves out the password-type fields). A kind
 * not set up yet shows as the Service's unsaved record: no id or dates, inactive, default flags.
 */
import { Type, type Static } from 'typebox';
import type { IntegrationRow } from '../../db/tables/integrations.ts';
import type { IntegrationKind } from '../../domain/integrations/catalog.ts';
import { publicSettings } from '../../domain/integrations/manage-integrations.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const ProjectIntegrationBasicSchema = Type.Object({
  id: nullable(Type.Integer()),
  title: Type.String(),
  slug: Type.String(),
  created_at: nullable(Type.String()),
  updated_at: nullable(Type.String()),
  active: Type.Boolean(),
  commit_events: Type.Boolean(),
  push_events: Type.Boolean(),
  issues_events: Type.Boolean(),
  confidential_issues_events: Type.Boolean(),
  merge_requests_events: Type.Boolean(),
  tag_push_events: Type.Boolean(),
  note_events: Type.Boolean(),
  confidential_note_events: Type.Boolean(),
  pipeline_events: Type.Boolean(),
  wiki_page_events: Type.Boolean(),
  job_events: Type.Boolean(),
  deployment_events: Type.Boolean(),
  comment_on_event_enabled: Type.Boolean(),
}, { title: 'ProjectIntegrationBasic' });

export const ProjectIntegrationSchema = Type.Object({
  ...ProjectIntegrationBasicSchema.properties,
  properties: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()])),
}, { title: 'ProjectIntegration' });

/** The column defaults of an integration never saved (migrations 2026-11-29T1200_integrations, 2026-11-30T0800). */
const UNSAVED = {
  id: null, created_at: null, updated_at: null, active: false, commit_events: true, push_events: true, issues_events: true,
  confidential_issues_events: true, merge_requests_events: true, tag_push_events: true, note_events: true,
  confidential_note_events: true, pipeline_events: false, wiki_page_events: true, job_events: false, deployment_events: false,
  comment_on_event_enabled: true,
};

export function presentIntegrationBasic(
  kind: IntegrationKind, row: IntegrationRow | undefined,
): Static<typeof ProjectIntegrationBasicSchema> {
  if (!row) return { ...UNSAVED, title: kind.title, slug: kind.slug };
  return {
    id: row.id, title: kind.title, slug: kind.slug, created_at: row.created_at, updated_at: row.updated_at,
    active: row.active === 1, commit_events: row.commit_events === 1, push_events: row.push_events === 1,
    issues_events: row.issues_events === 1, confidential_issues_events: row.confidential_issues_events === 1,
    merge_requests_events: row.merge_requests_events === 1, tag_push_events: row.tag_push_events === 1,
    note_events: row.note_events === 1, confidential_note_events: row.confidential_note_events === 1,
    pipeline_events: row.pipeline_events === 1, wiki_page_events: row.wiki_page_events === 1, job_events: row.job_events === 1,
    deployment_events: row.deployment_events === 1, comment_on_event_enabled: row.comment_on_event_enabled === 1,
  };
}

export function presentIntegration(kind: IntegrationKind, row: IntegrationRow | undefined): Static<typeof ProjectIntegrationSchema> {
  const all = publicSettings(row);
  // Only the kind's non-secret settings, whatever the row holds.
  const properties: Record<string, string | boolean> = {};
  for (const s of kind.settings) if (!s.secret && all[s.name] !== undefined) properties[s.name] = all[s.name];
  return { ...presentIntegrationBasic(kind, row), properties };
}
