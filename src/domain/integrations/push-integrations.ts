/**
 * A push's integrations (the Service runs `project.execute_integrations(push_data, :push_hooks)`
 * / `:tag_push_hooks` from Git::BranchHooksService / Git::TagHooksService, with the same push
 * data as the webhooks, and not at all when the push moved more refs than push_event_hooks_limit).
 * Each active integration that hears the event gets one background job (INTEGRATION_JOB); the
 * job reads the integration again, so a change or a DELETE before it runs is obeyed.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { currentSettings } from '../settings/settings.ts';
import { buildPushData, type PushedRefChange } from '../web-hooks/push-hooks.ts';
import type { HookUrls } from '../web-hooks/payloads.ts';
import { integrationKind, type EventFlag } from './catalog.ts';
import { activeIntegrations } from './integrations.queries.ts';

export const INTEGRATION_JOB = 'integrations.execute';
/** A failed call is tried again a few times (the Service's integration workers retry too). */
export const INTEGRATION_ATTEMPTS = 3;

export interface IntegrationJob {
  integrationId: number;
  /** The push data (Gitlab::DataBuilder::Push) of one ref change. */
  data: Record<string, unknown>;
}

export async function executePushIntegrations(
  db: Kysely<DB>, urls: HookUrls, gitDir: string, project: ProjectRow, updates: PushedRefChange[], userId: number,
): Promise<void> {
  const active = await activeIntegrations(db, project.id);
  if (active.length === 0) return;
  const changes = updates.filter((u) => u.ref.startsWith('refs/heads/') || u.ref.startsWith('refs/tags/'));
  if (changes.length === 0 || changes.length > (await currentSettings(db)).push_event_hooks_limit) return;
  for (const u of changes) {
    const flag = u.ref.startsWith('refs/tags/') ? 'tag_push_events' as const : 'push_events' as const;
    const hearing = active.filter((row) => row[flag] === 1 && integrationKind(row.type)?.events.includes(flag));
    if (hearing.length === 0) continue;
    const data = await buildPushData(db, urls, gitDir, project, u, userId);
    for (const row of hearing) {
      const job: IntegrationJob = { integrationId: row.id, data };
      await insertJob(db, { kind: INTEGRATION_JOB, payload: job, maxAttempts: INTEGRATION_ATTEMPTS });
    }
  }
}

/**
 * A record or pipeline event's integrations (the Service's `project.execute_integrations(data,
 * :issue_hooks)` and the like, beside the webhooks): each active integration whose kind supports
 * the event and that hears it gets one job with the webhooks' payload.
 */
export async function executeEventIntegrations(
  db: Kysely<DB> | Transaction<DB>, projectId: number, flag: EventFlag, data: Record<string, unknown>,
): Promise<number> {
  const hearing = (await activeIntegrations(db, projectId))
    .filter((row) => row[flag] === 1 && integrationKind(row.type)?.events.includes(flag));
  for (const row of hearing) {
    const job: IntegrationJob = { integrationId: row.id, data };
    await insertJob(db, { kind: INTEGRATION_JOB, payload: job, maxAttempts: INTEGRATION_ATTEMPTS });
  }
  return hearing.length;
}
