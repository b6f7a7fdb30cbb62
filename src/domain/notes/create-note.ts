/**
 * Writing notes (Notes::CreateService, UpdateService, DestroyService of the Service 15.2): the
 * note's own validation (Note: present, at most 1,000,000 characters), then in one transaction
 * the row, its thread (a reply turns an individual note into a thread), the noteable's
 * updated_at (Note#touch_noteable), the `commented` event and the todos of its mentions.
 * Quick actions (`/close`, `/label …`) are not interpreted: the text is kept as written.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { NoteRow } from '../../db/tables/notes.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { createTodos } from '../todos/todos.queries.ts';
import type { MentionTodo } from './mention-todos.ts';
import type { NoteableRef } from './noteable.ts';
import { convertToDiscussion, deleteNoteRows, insertNote, touchNoteable, updateNoteBody } from './notes.queries.ts';
import { newDiscussionId } from './system-notes.ts';

/** Note's `validates :note, length: { maximum: Gitlab::Database::MAX_TEXT_SIZE_LIMIT }`. */
export const NOTE_MAX_LENGTH = 1_000_000;

export type NoteErrors = Record<string, string[]>;
export type NoteResult = { ok: true; value: NoteRow } | { ok: false; errors: NoteErrors };

/** The model's messages for a note's text, as `errors.messages` has them. */
export function noteTextErrors(body: string): NoteErrors | null {
  if (body.trim() === '') return { note: ["can't be blank"] };
  // Ruby counts characters (code points); a UTF-16 length within the bound is within it too.
  if (body.length > NOTE_MAX_LENGTH && [...body].length > NOTE_MAX_LENGTH) {
    return { note: [`is too long (maximum is ${NOTE_MAX_LENGTH} characters)`] };
  }
  return null;
}

export interface NewNote {
  noteable: NoteableRef;
  authorId: number;
  body: string;
  internal: boolean;
  /**
   * null: an individual note; 'DiscussionNote': a thread's note; 'LegacyDiffNote': a commit comment on a line;
   * 'DiffNote': a merge request comment on a line of its diff.
   */
  type: null | 'DiscussionNote' | 'LegacyDiffNote' | 'DiffNote';
  /** The thread a reply joins. */
  replyTo?: string;
  /** An administrator's or owner's back-dated creation time (also its updated_at). */
  createdAt?: string;
  /** JSON of a line comment's place (path, line, line_type). */
  position?: string | null;
  mentions: readonly MentionTodo[];
}

export async function createNote(db: Kysely<DB>, n: NewNote): Promise<NoteResult> {
  const errors = noteTextErrors(n.body);
  if (errors) return { ok: false, errors };
  const now = nowIso();
  const created = n.createdAt ?? now;
  const t = n.noteable;
  const note = await db.transaction().execute(async (trx) => {
    if (n.replyTo !== undefined) await convertToDiscussion(trx, t, n.replyTo);
    const row = await insertNote(trx, {
      note: n.body, noteable_type: t.type, noteable_id: t.id, commit_id: t.commitId, project_id: t.projectId,
      author_id: n.authorId, system: 0, system_action: null, internal: n.internal ? 1 : 0, type: n.type,
      discussion_id: n.replyTo ?? newDiscussionId(),
      // Threads on merge requests can be resolved (DiscussionNote#resolvable? on a MergeRequest); individual notes cannot.
      resolvable: t.type === 'MergeRequest' && n.type !== null ? 1 : 0, resolved_at: null, resolved_by_id: null,
      position: n.position ?? null, updated_by_id: null, last_edited_at: null, created_at: created, updated_at: created,
    });
    await touchNoteable(trx, t, now);
    await recordEvent(trx, {
      project_id: t.projectId, author_id: n.authorId, action: 'commented', target_type: 'Note', target_id: row.id,
    }, now);
    // Note#can_create_todo?: none for notes on snippets.
    if (t.type !== 'Snippet') {
      await createTodos(trx, n.mentions.map((m) => ({
        user_id: m.userId, author_id: n.authorId, project_id: t.projectId, target_type: t.type, target_id: t.id,
        commit_id: t.commitId, note_id: row.id, action: m.action,
      })), now);
    }
    // The comment webhooks (Notes::PostProcessService#execute_note_hooks; system notes run none).
    if (t.projectId !== null) {
      await queueObjectHook(trx, { kind: 'note', id: row.id, projectId: t.projectId, userId: n.authorId });
    }
    return row;
  });
  return { ok: true, value: note };
}

export async function updateNote(
  db: Kysely<DB>, t: NoteableRef, note: NoteRow, body: string | undefined, editorId: number,
): Promise<NoteResult> {
  // Notes::UpdateService leaves a note whose text does not change as it was.
  if (body === undefined || body === note.note) return { ok: true, value: note };
  const errors = noteTextErrors(body);
  if (errors) return { ok: false, errors };
  const now = nowIso();
  const updated = await db.transaction().execute(async (trx) => {
    const row = await updateNoteBody(trx, note.id, body, editorId, now);
    if (row) await touchNoteable(trx, t, now);
    return row;
  });
  return updated ? { ok: true, value: updated } : { ok: false, errors: {} };
}

/** Notes::DestroyService: the note, its award emoji and its todos go; the noteable is touched. */
export async function destroyNote(db: Kysely<DB>, t: NoteableRef, noteId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const gone = await deleteNoteRows(trx, noteId);
    if (gone) await touchNoteable(trx, t, nowIso());
    return gone;
  });
}
