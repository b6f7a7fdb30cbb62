/**
 * Deliveries of record events (issues, notes, merge requests, releases). The writing code queues a
 * small build job inside its own transaction (`queueObjectHook`), so it exists only once the
 * write committed; the job (WEB_HOOK_BUILD_JOB) reads the record, builds the Service's payload
 * (object-payloads.ts) with the instance's URLs, and queues one delivery per hook that hears it.
 * The queue is skipped when no hook of the project hears the event, so a project without hooks
 * pays one indexed read per write.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { enqueueHookEvent, enqueueSystemHookEvent } from './hook-events.ts';
import { buildObjectData, type ObjectDataEnv } from './object-payloads.ts';
import { projectHearsAny, type HookFlag } from './web-hooks.queries.ts';

export const WEB_HOOK_BUILD_JOB = 'web_hooks.build';

export type ObjectKind = 'issue' | 'note' | 'merge_request' | 'release';

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
}

/** The flags an event of each kind may reach (its confidential twin where the Service has one). */
const FLAGS: Record<ObjectKind, HookFlag[]> = {
  issue: ['issues_events', 'confidential_issues_events'],
  note: ['note_events', 'confidential_note_events'],
  merge_request: ['merge_requests_events'],
  release: ['releases_events'],
};

/** Queues the event's build job when a hook of the project (or a system hook, for merge requests) may hear it. */
export async function queueObjectHook(db: Kysely<DB> | Transaction<DB>, event: ObjectHookEvent): Promise<void> {
  const system = event.kind === 'merge_request';
  if (!(await projectHearsAny(db, event.projectId, FLAGS[event.kind], system))) return;
  await insertJob(db, { kind: WEB_HOOK_BUILD_JOB, payload: event, maxAttempts: 3 });
}

/** The build job: the payload, then one delivery per hook. */
export async function buildObjectHook(env: ObjectDataEnv, event: ObjectHookEvent): Promise<void> {
  const built = await buildObjectData(env, event);
  if (!built) return;
  await enqueueHookEvent(env.db, { id: event.projectId }, built.flag, built.data);
  // Merge request events reach the system hooks too (SystemHooksService for merge_request_hooks).
  if (event.kind === 'merge_request') await enqueueSystemHookEvent(env.db, 'merge_requests_events', built.data);
}
