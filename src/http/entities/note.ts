/**
 * Notes as the Service 15.2 presents them (lib/api/entities/note.rb, discussion.rb,
 * commit_note.rb): a Note entity per note, with its author; a Discussion is a thread's id, whether
 * it is one individual note, and its notes; a CommitNote is the older shape of a commit comment
 * (text, the line it is on, author, creation time). Authors of a page are read in one query.
 */
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { NoteRow } from '../../db/tables/notes.ts';
import type { NoteableRef } from '../../domain/notes/noteable.ts';
import { findUsersByIds } from '../../domain/users/users-batch.queries.ts';
import { presentUserBasic, UserBasicSchema, type UserBasic } from './user.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const NoteSchema = Type.Object({
  id: Type.Integer(),
  type: Nullable(Type.String()),
  body: Type.String(),
  attachment: Nullable(Type.String()),
  author: UserBasicSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  system: Type.Boolean(),
  noteable_id: Nullable(Type.Integer()),
  noteable_type: Type.String(),
  project_id: Nullable(Type.Integer()),
  resolvable: Type.Boolean(),
  resolved: Type.Optional(Type.Boolean()),
  resolved_by: Type.Optional(Nullable(UserBasicSchema)),
  resolved_at: Type.Optional(Nullable(Type.String())),
  confidential: Type.Boolean(),
  internal: Type.Boolean(),
  noteable_iid: Nullable(Type.Integer()),
  commands_changes: Type.Object({}),
  /** A diff note's place in the merge request's diff. */
  position: Type.Optional(Type.Object({
    base_sha: Type.String(), start_sha: Type.String(), head_sha: Type.String(), old_path: Type.String(), new_path: Type.String(),
    position_type: Type.String(), old_line: Nullable(Type.Integer()), new_line: Nullable(Type.Integer()), line_range: Type.Null(),
  })),
}, { title: 'Note' });
export type Note = Static<typeof NoteSchema>;

export const DiscussionSchema = Type.Object({
  id: Type.String(),
  individual_note: Type.Boolean(),
  notes: Type.Array(NoteSchema),
}, { title: 'Discussion' });
export type Discussion = Static<typeof DiscussionSchema>;

export const CommitNoteSchema = Type.Object({
  note: Type.String(),
  path: Nullable(Type.String()),
  line: Nullable(Type.Integer()),
  line_type: Nullable(Type.String()),
  author: UserBasicSchema,
  created_at: Type.String(),
}, { title: 'CommitNote' });
export type CommitNote = Static<typeof CommitNoteSchema>;

/** Where a commit comment sits (stored in the note's `position`). */
export interface CommitLinePosition {
  path: string;
  line: number;
  line_type: 'new' | 'old';
}

async function authorsOf(db: Kysely<DB>, rows: readonly NoteRow[], externalUrl: string): Promise<(id: number) => UserBasic> {
  const ids = new Set<number>();
  for (const r of rows) {
    ids.add(r.author_id);
    if (r.resolved_by_id !== null) ids.add(r.resolved_by_id);
  }
  const users = new Map<number, UserRow>((await findUsersByIds(db, [...ids])).map((u) => [u.id, u]));
  const opts = { externalUrl, canReadProfile: false };
  return (id) => presentUserBasic(users.get(id)!, {}, opts);
}

/** One note as the Note entity; `author` presents a user id (the note's author and resolver) as UserBasic. */
export function presentNote(r: NoteRow, t: Pick<NoteableRef, 'type' | 'iid'>, author: (id: number) => UserBasic): Note {
  const note = {
    id: r.id, type: r.type, body: r.note, attachment: null, author: author(r.author_id),
    created_at: r.created_at, updated_at: r.updated_at, system: r.system === 1,
    noteable_id: r.noteable_id, noteable_type: r.noteable_type, project_id: r.project_id, resolvable: r.resolvable === 1,
  } as Note;
  // Only notes that can be resolved say whether and by whom they were.
  if (r.resolvable === 1) {
    note.resolved = r.resolved_at !== null;
    note.resolved_by = r.resolved_by_id !== null ? author(r.resolved_by_id) : null;
    note.resolved_at = r.resolved_at;
  }
  note.confidential = r.internal === 1;
  note.internal = r.internal === 1;
  note.noteable_iid = t.type === 'Issue' || t.type === 'MergeRequest' ? t.iid : null;
  note.commands_changes = {};
  // DiffNote: where in the merge request's diff it sits (Entities::Note exposes `position` for diff notes).
  if (r.type === 'DiffNote' && r.position !== null) note.position = JSON.parse(r.position) as Note['position'];
  return note;
}

export async function presentNotes(db: Kysely<DB>, rows: readonly NoteRow[], t: NoteableRef, externalUrl: string): Promise<Note[]> {
  const author = await authorsOf(db, rows, externalUrl);
  return rows.map((r) => presentNote(r, t, author));
}

/**
 * Threads from their notes (Discussion.build_collection), in the order of `discussionIds`. A
 * thread is an individual note while its one note is no DiscussionNote (nor a line comment).
 */
export async function presentDiscussions(
  db: Kysely<DB>, discussionIds: readonly string[], rows: readonly NoteRow[], t: NoteableRef, externalUrl: string,
): Promise<Discussion[]> {
  const notes = await presentNotes(db, rows, t, externalUrl);
  const byThread = new Map<string, { rows: NoteRow[]; notes: Note[] }>();
  rows.forEach((r, i) => {
    const thread = byThread.get(r.discussion_id) ?? { rows: [], notes: [] };
    thread.rows.push(r);
    thread.notes.push(notes[i]);
    byThread.set(r.discussion_id, thread);
  });
  return discussionIds.flatMap((id) => {
    const thread = byThread.get(id);
    if (!thread) return [];
    return [{ id, individual_note: thread.rows[0].type === null, notes: thread.notes }];
  });
}

export async function presentCommitNotes(db: Kysely<DB>, rows: readonly NoteRow[], externalUrl: string): Promise<CommitNote[]> {
  const author = await authorsOf(db, rows, externalUrl);
  return rows.map((r) => {
    const at = r.type === 'LegacyDiffNote' && r.position !== null ? JSON.parse(r.position) as CommitLinePosition : null;
    // `diff_line.new_line`: a removed line has no place in the new file, so its `line` is null.
    return {
      note: r.note, path: at?.path ?? null, line: at?.line_type === 'new' ? at.line : null, line_type: at?.line_type ?? null,
      author: author(r.author_id), created_at: r.created_at,
    };
  });
}
