/**
 * The notes of one noteable (issue, project snippet, commit): lists, threads and single notes,
 * always scoped to the noteable so an id from elsewhere names nothing. A commit's notes are found
 * by project and sha (notes_project_commit), the others by type and id (notes_noteable).
 */
import { sql, type Insertable, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { NoteRow, NotesTable } from '../../db/tables/notes.ts';
import type { NoteableRef } from './noteable.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** UserPreference::NOTES_FILTERS: every note, comments only (no system notes), or system notes only. */
export const NOTES_FILTERS = ['all_notes', 'only_comments', 'only_activity'] as const;
export type NotesFilter = (typeof NOTES_FILTERS)[number];

export interface NotesScope {
  /** Whether the viewer reads internal notes (note.policy.ts); otherwise they are left out. */
  includeInternal: boolean;
}

function ofNoteable<O>(qb: SelectQueryBuilder<DB, 'notes', O>, t: NoteableRef): SelectQueryBuilder<DB, 'notes', O> {
  if (t.type === 'Commit') {
    return qb.where('notes.project_id', '=', t.projectId).where('notes.commit_id', '=', t.commitId)
      .where('notes.noteable_type', '=', 'Commit');
  }
  return qb.where('notes.noteable_type', '=', t.type).where('notes.noteable_id', '=', t.id);
}

function visible<O>(qb: SelectQueryBuilder<DB, 'notes', O>, scope: NotesScope): SelectQueryBuilder<DB, 'notes', O> {
  return scope.includeInternal ? qb : qb.where('notes.internal', '=', 0);
}

export interface NotesListOptions extends NotesScope {
  filter: NotesFilter;
  orderBy: 'created_at' | 'updated_at';
  sort: 'asc' | 'desc';
}

/** A noteable's notes for GET …/notes, ordered with the id as tie breaker (order_options_with_tie_breaker). */
export function noteableNotesQuery(db: Kysely<DB>, t: NoteableRef, o: NotesListOptions) {
  let qb = visible(ofNoteable(db.selectFrom('notes').selectAll('notes'), t), o);
  if (o.filter === 'only_comments') qb = qb.where('notes.system', '=', 0);
  if (o.filter === 'only_activity') qb = qb.where('notes.system', '=', 1);
  return qb.orderBy(`notes.${o.orderBy}`, o.sort).orderBy('notes.id', o.sort);
}

/** The commit's notes oldest first (GET …/commits/:sha/comments orders by created_at). */
export function commitNotesQuery(db: Kysely<DB>, t: NoteableRef, scope: NotesScope) {
  return visible(ofNoteable(db.selectFrom('notes').selectAll('notes'), t), scope).orderBy('notes.created_at').orderBy('notes.id');
}

export function findNoteOf(db: Db, t: NoteableRef, noteId: number): Promise<NoteRow | undefined> {
  return ofNoteable(db.selectFrom('notes').selectAll('notes'), t).where('notes.id', '=', noteId).executeTakeFirst();
}

/**
 * The noteable's threads, one row each, in the order they were started (the Service pages
 * `discussion_ids_relation`: discussion ids grouped, ordered by their first note).
 */
export function discussionIdsQuery(db: Kysely<DB>, t: NoteableRef, scope: NotesScope) {
  return visible(ofNoteable(db.selectFrom('notes'), t), scope)
    .select('notes.discussion_id').groupBy('notes.discussion_id')
    .orderBy(sql`min(notes.created_at)`).orderBy(sql`min(notes.id)`);
}

/** The notes of these threads of the noteable, oldest first (the `fresh` order of a thread). */
export async function discussionNotes(db: Db, t: NoteableRef, discussionIds: readonly string[], scope: NotesScope): Promise<NoteRow[]> {
  if (discussionIds.length === 0) return [];
  return visible(ofNoteable(db.selectFrom('notes').selectAll('notes'), t), scope)
    .where('notes.discussion_id', 'in', [...new Set(discussionIds)])
    .orderBy('notes.created_at').orderBy('notes.id').execute();
}

export async function insertNote(db: Db, row: Insertable<NotesTable>): Promise<NoteRow> {
  return db.insertInto('notes').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * Replying to an individual note turns it into a thread (IndividualNoteDiscussion
 * #convert_to_discussion!): its notes become DiscussionNotes, keeping the thread's id.
 */
export async function convertToDiscussion(db: Db, t: NoteableRef, discussionId: string): Promise<void> {
  let qb = db.updateTable('notes').set({ type: 'DiscussionNote' })
    .where('discussion_id', '=', discussionId).where('type', 'is', null).where('system', '=', 0)
    .where('noteable_type', '=', t.type);
  qb = t.id === null ? qb.where('project_id', '=', t.projectId).where('commit_id', '=', t.commitId) : qb.where('noteable_id', '=', t.id);
  await qb.execute();
}

export async function updateNoteBody(db: Db, noteId: number, body: string, editorId: number, now: string): Promise<NoteRow | undefined> {
  return db.updateTable('notes').set({ note: body, updated_by_id: editorId, last_edited_at: now, updated_at: now })
    .where('id', '=', noteId).returningAll().executeTakeFirst();
}

/** Removes a note with what hangs on it: its award emoji and the todos it raised. */
export async function deleteNoteRows(db: Db, noteId: number): Promise<boolean> {
  await db.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', '=', noteId).execute();
  await db.deleteFrom('todos').where('note_id', '=', noteId).execute();
  const res = await db.deleteFrom('notes').where('id', '=', noteId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** A note touches its noteable (Note#touch_noteable): the or snippet's updated_at moves; commits are no rows. */
export async function touchNoteable(db: Db, t: NoteableRef, now: string): Promise<void> {
  if (t.id === null) return;
  if (t.type === 'Issue') await db.updateTable('issues').set({ updated_at: now }).where('id', '=', t.id).execute();
  if (t.type === 'Snippet') await db.updateTable('snippets').set({ updated_at: now }).where('id', '=', t.id).execute();
  if (t.type === 'MergeRequest') await db.updateTable('merge_requests').set({ updated_at: now }).where('id', '=', t.id).execute();
}

/** Resolves (or unresolves, `userId` null) resolvable notes of a thread, or one note of it (ResolvableNote#resolve!). */
export async function resolveNotes(db: Db, discussionId: string, noteId: number | null, userId: number | null, now: string) {
  let q = db.updateTable('notes').set({ resolved_at: userId === null ? null : now, resolved_by_id: userId, updated_at: now })
    .where('discussion_id', '=', discussionId).where('resolvable', '=', 1);
  if (noteId !== null) q = q.where('id', '=', noteId);
  await q.execute();
}

/** A deleted user's notes stay with their noteables, written by the ghost user (Users::MigrateToGhostUserService). */
export async function moveNotesToUser(db: Db, fromId: number, toId: number): Promise<void> {
  await db.updateTable('notes').set({ author_id: toId }).where('author_id', '=', fromId).execute();
}
