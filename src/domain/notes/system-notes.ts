/**
 * System notes: the lines the Service writes into a noteable's thread when something about it
 * changes ("closed", "added ~1 label", "changed milestone to %2", "assigned to @alice").
 * Written inside the changing operation's transaction by the operation itself; the note texts
 * follow app/services/system_notes/*.rb of the Service 15.2.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

/** A new thread's id: 40 hex characters, as the Service's Discussion ids (SHA-1 sized). */
export function newDiscussionId(): string {
  return randomBytes(20).toString('hex');
}

export interface NewSystemNote {
  project_id: number | null;
  /** 'Issue' | 'MergeRequest' | 'Snippet'. */
  noteable_type: string;
  noteable_id: number;
  author_id: number;
  /** The note's text, e.g. `closed`, `added ~12 label`. */
  note: string;
  /** What it records (SystemNoteMetadata action): 'closed', 'reopened', 'label', 'milestone', 'assignee', 'title', … */
  action: string;
}

export async function addSystemNote(db: Kysely<DB> | Transaction<DB>, n: NewSystemNote, now = nowIso()): Promise<number> {
  const row = await db.insertInto('notes').values({
    note: n.note, noteable_type: n.noteable_type, noteable_id: n.noteable_id, commit_id: null, project_id: n.project_id,
    author_id: n.author_id, system: 1, system_action: n.action, type: null, discussion_id: newDiscussionId(),
    resolved_at: null, resolved_by_id: null, position: null, updated_by_id: null, last_edited_at: null,
    created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}
