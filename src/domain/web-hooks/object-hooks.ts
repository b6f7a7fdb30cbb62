/**
 * Deliveries of record events (issues, notes, merge requests, releases). The writing code queues a
 * small build job inside its own transaction (`queueObjectHook`), so it exists only once the
 * write committed; the job (WEB_HOOK_BUILD_JOB) reads the record, builds the Service's payload
 * (object-payloads.ts) with the instance's URLs, and queues one delivery per hook that hears it.
 * The queue is skipped when no hook of the project hears the event, so a project without hooks
 * pays one indexed read per write. This module imports no record area, so any of them (jobs too)
 * may call it; object-payloads.ts and build-object-hook.ts read the records.
 */
import type { EventFlag } from '../integrations/catalog.ts';
import { integrationHearsAny } from '../integrations/integrations.queries.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { projectHearsAny, type HookFlag } from './web-hooks.queries.ts';

export const WEB_HOOK_BUILD_JOB = 'web_hooks.build';

export type ObjectKind = 'issue' | 'note' | 'merge_request' | 'release' | 'job' | 'deployment';

export interface ObjectHookEvent {
  kind: ObjectKind;
  /** The record's id. */
  id: number;
  projectId: number;
  /** open, update, close, reopen, merge (issues, merge requests); create, update, delete (releases). */
  action?: string;
  /** Who acted (release payloads name nobody). */
  userId?: number;
  /** { attribute: { previous, current } } of an update. */
  changes?: Record<string, { previous: unknown; current: unknown }>;
  /** A job's or deployment's status at its transition (it may have moved on when the payload is built). */
  status?: string;
  /** When that transition happened (a deployment's status_changed_at). */
  at?: string;
}

/** The flags an event of each kind may reach (its confidential twin where the Service has one). */
const FLAGS: Record<ObjectKind, HookFlag[]> = {
  issue: ['issues_events', 'confidential_issues_events'],
  note: ['note_events', 'confidential_note_events'],
  merge_request: ['merge_requests_events'],
  release: ['releases_events'],
  job: ['job_events'],
  deployment: ['deployment_events'],
};

/** The kinds whose events reach the project's integrations too (the Service's execute_integrations beside execute_hooks). */
const FOR_INTEGRATIONS: Partial<Record<ObjectKind, EventFlag[]>> = {
  issue: ['issues_events', 'confidential_issues_events'],
  note: ['note_events', 'confidential_note_events'],
  merge_request: ['merge_requests_events'],
  deployment: ['deployment_events'],
};

/** Queues the event's build job when a hook of the project (or a system hook, for merge requests) or an integration may hear it. */
export async function queueObjectHook(db: Kysely<DB> | Transaction<DB>, event: ObjectHookEvent): Promise<void> {
  const system = event.kind === 'merge_request';
  // build-object-hook.ts queues the integrations' jobs once the payload is built.
  const integrationFlags = FOR_INTEGRATIONS[event.kind];
  const forIntegrations = integrationFlags !== undefined && await integrationHearsAny(db, event.projectId, integrationFlags);
  if (!forIntegrations && !(await projectHearsAny(db, event.projectId, FLAGS[event.kind], system))) return;
  await insertJob(db, { kind: WEB_HOOK_BUILD_JOB, payload: event, maxAttempts: 3 });
}
