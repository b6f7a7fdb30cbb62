/**
 * Reading an issue's resource events (ResourceLabelEvent, ResourceMilestoneEvent,
 * ResourceStateEvent of the Service 15.2), oldest first as the API pages them (by id).
 * The rows are written by the operations that change an issue's labels, milestone or state.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const RESOURCE_EVENT_TABLES = ['resource_label_events', 'resource_milestone_events', 'resource_state_events'] as const;
export type ResourceEventTable = (typeof RESOURCE_EVENT_TABLES)[number];

export function labelEventsOfIssue(db: Db, issueId: number) {
  return db.selectFrom('resource_label_events').selectAll().where('issue_id', '=', issueId).orderBy('id');
}

export function milestoneEventsOfIssue(db: Db, issueId: number) {
  return db.selectFrom('resource_milestone_events').selectAll().where('issue_id', '=', issueId).orderBy('id');
}

export function stateEventsOfIssue(db: Db, issueId: number) {
  return db.selectFrom('resource_state_events').selectAll().where('issue_id', '=', issueId).orderBy('id');
}

/** Whose events: an issue's (issue_id) or a merge request's (merge_request_id). */
export type ResourceOwnerColumn = 'issue_id' | 'merge_request_id';

export function labelEventsOf(db: Db, column: ResourceOwnerColumn, id: number) {
  return db.selectFrom('resource_label_events').selectAll().where(column, '=', id).orderBy('id');
}

export function milestoneEventsOf(db: Db, column: ResourceOwnerColumn, id: number) {
  return db.selectFrom('resource_milestone_events').selectAll().where(column, '=', id).orderBy('id');
}

export function stateEventsOf(db: Db, column: ResourceOwnerColumn, id: number) {
  return db.selectFrom('resource_state_events').selectAll().where(column, '=', id).orderBy('id');
}

export async function labelsByIds(db: Db, ids: readonly number[]): Promise<Map<number, LabelRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('labels').selectAll().where('id', 'in', unique).execute();
  return new Map(rows.map((l) => [l.id, l]));
}
