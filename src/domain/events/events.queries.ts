/**
 * Events (the Service's Event): what happened in a project or group, for the activity feeds of
 * `/events`, `/users/:id/events` and `/projects/:id/events`. Written by the operation that did the
 * thing, inside its transaction, so a rolled-back write leaves no event behind.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

/** The Service's Event actions by name (Event::ACTIONS). */
export const EVENT_ACTIONS = [
  'created', 'updated', 'closed', 'reopened', 'pushed', 'commented', 'merged', 'joined', 'left', 'destroyed', 'expired', 'approved',
] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

export interface NewEvent {
  project_id: number | null;
  group_id?: number | null;
  author_id: number;
  action: EventAction;
  /** The Service's class name of the target ('Issue', 'Milestone', 'Note', 'MergeRequest', …); null for pushes and joins. */
  target_type: string | null;
  target_id: number | null;
}

export async function recordEvent(db: Kysely<DB> | Transaction<DB>, event: NewEvent, now = nowIso()): Promise<number> {
  const row = await db.insertInto('events')
    .values({ ...event, group_id: event.group_id ?? null, created_at: now, updated_at: now })
    .returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export interface PushPayload {
  commit_count: number;
  action: 'created' | 'removed' | 'pushed';
  ref_type: 'branch' | 'tag';
  commit_from: string | null;
  commit_to: string | null;
  ref: string;
  commit_title: string | null;
}

/** A push to one ref: a 'pushed' event with its payload (the Service's PushEventPayload). */
export async function recordPushEvent(
  db: Kysely<DB> | Transaction<DB>, event: { project_id: number; author_id: number }, payload: PushPayload, now = nowIso(),
): Promise<number> {
  const id = await recordEvent(db, { ...event, action: 'pushed', target_type: null, target_id: null }, now);
  await db.insertInto('push_event_payloads').values({ event_id: id, ...payload, ref_count: null }).execute();
  return id;
}
