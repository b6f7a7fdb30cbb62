/**
 * Events (the Service's Event): what happened in a project or group, for the activity feeds of
 * `/events`, `/users/:id/events` and `/projects/:id/events`. Written by the operation that did the
 * thing, inside its transaction, so a rolled-back write leaves no event behind.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { EventRow, NoteRow, PushEventPayloadsTable } from '../../db/tables/notes.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import type {} from '../../db/tables/wiki-page-meta.ts';
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

/**
 * Many refs of one kind pushed with one action at once: one 'pushed' event naming how many
 * (the Service's BulkPushEventPayloadService: no ref, no commits, `ref_count`).
 */
export async function recordBulkPushEvent(
  db: Kysely<DB> | Transaction<DB>, event: { project_id: number; author_id: number },
  bulk: { action: PushPayload['action']; ref_type: PushPayload['ref_type']; ref_count: number }, now = nowIso(),
): Promise<number> {
  const id = await recordEvent(db, { ...event, action: 'pushed', target_type: null, target_id: null }, now);
  await db.insertInto('push_event_payloads').values({
    event_id: id, commit_count: 0, action: bulk.action, ref_type: bulk.ref_type, commit_from: null, commit_to: null,
    ref: null, commit_title: null, ref_count: bulk.ref_count,
  }).execute();
  return id;
}

/** An issue as the activity feeds need it: its title and iid, and what IssuePolicy asks. */
export interface EventIssue {
  id: number;
  iid: number;
  title: string;
  author_id: number;
  confidential: number;
  discussion_locked: number | null;
  assignee_ids: number[];
}

/** What a page of events names, read in one query per table (no query per event). */
export interface EventTargets {
  issues: Map<number, EventIssue>;
  milestones: Map<number, { id: number; iid: number; title: string }>;
  notes: Map<number, NoteRow>;
  snippets: Map<number, SnippetRow>;
  payloads: Map<number, Selectable<PushEventPayloadsTable>>;
  /** The events' and their notes' authors. */
  users: Map<number, UserRow>;
  /** The titles of the wiki pages events point at (WikiPage::Meta). */
  wikiPages: Map<number, string>;
}

const idsOf = (values: (number | null | undefined)[]) => [...new Set(values.filter((v): v is number => typeof v === 'number'))];

export async function eventTargetsOf(db: Kysely<DB> | Transaction<DB>, events: EventRow[]): Promise<EventTargets> {
  const targetIds = (type: string) => idsOf(events.filter((e) => e.target_type === type).map((e) => e.target_id));
  const noteIds = targetIds('Note');
  const notes = noteIds.length ? await db.selectFrom('notes').selectAll().where('id', 'in', noteIds).execute() : [];
  const noteables = (type: string) => notes.filter((n) => n.noteable_type === type).map((n) => n.noteable_id);
  const issueIds = idsOf([...targetIds('Issue'), ...noteables('Issue')]);
  const snippetIds = idsOf([...targetIds('Snippet'), ...noteables('Snippet')]);
  const milestoneIds = targetIds('Milestone');
  const pushIds = events.filter((e) => e.action === 'pushed').map((e) => e.id);
  const [issues, assignees, milestones, snippets, payloads] = await Promise.all([
    issueIds.length ? db.selectFrom('issues')
      .select(['id', 'iid', 'title', 'author_id', 'confidential', 'discussion_locked']).where('id', 'in', issueIds).execute() : [],
    issueIds.length ? db.selectFrom('issue_assignees').select(['issue_id', 'user_id']).where('issue_id', 'in', issueIds).execute() : [],
    milestoneIds.length ? db.selectFrom('milestones').select(['id', 'iid', 'title']).where('id', 'in', milestoneIds).execute() : [],
    snippetIds.length ? db.selectFrom('snippets').selectAll().where('id', 'in', snippetIds).execute() : [],
    pushIds.length ? db.selectFrom('push_event_payloads').selectAll().where('event_id', 'in', pushIds).execute() : [],
  ]);
  const wikiIds = targetIds('WikiPage::Meta');
  const wikiPages = wikiIds.length
    ? await db.selectFrom('wiki_page_meta').select(['id', 'title']).where('id', 'in', wikiIds).execute() : [];
  const userIds = idsOf([...events.map((e) => e.author_id), ...notes.map((n) => n.author_id), ...notes.map((n) => n.resolved_by_id)]);
  const users = userIds.length ? await db.selectFrom('users').selectAll().where('id', 'in', userIds).execute() : [];
  const assigned = new Map<number, number[]>();
  for (const a of assignees) assigned.set(a.issue_id, [...(assigned.get(a.issue_id) ?? []), a.user_id]);
  return {
    issues: new Map(issues.map((i) => [i.id, { ...i, assignee_ids: assigned.get(i.id) ?? [] }])),
    milestones: new Map(milestones.map((m) => [m.id, m])),
    notes: new Map(notes.map((n) => [n.id, n])),
    snippets: new Map(snippets.map((s) => [s.id, s])),
    payloads: new Map(payloads.map((p) => [p.event_id, p])),
    users: new Map(users.map((u) => [u.id, u])),
    wikiPages: new Map(wikiPages.map((w) => [w.id, w.title])),
  };
}
