/**
 * A noteable's comments on its page, oldest first, each at its anchor `#note_<id>`: the anchor
 * the note hook's `url` and the to-do's `target_url` name (domain/web-hooks/object-payloads.ts).
 * The caller decides who reads them, as the API's notes routes do (read_note on the project, and
 * the noteable itself); internal notes only for those who read internal notes (note.policy.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { NoteableRef } from '../../domain/notes/noteable.ts';
import { noteableNotesQuery } from '../../domain/notes/notes.queries.ts';
import { findUserBasicsByIds } from '../../domain/users/users-batch.queries.ts';
import type { MarkdownRenderer } from '../../domain/markdown/render-pool.ts';
import { html, type SafeHtml } from '../html.ts';
import { timeTag } from '../ci-view.ts';
import { markdownBlock } from './markdown.ts';

/** Comments shown on a page (the oldest; the API pages through the rest). */
const MAX_NOTES = 200;

export async function notesSection(
  db: Kysely<DB>, markdown: MarkdownRenderer, externalUrl: string, noteable: NoteableRef, includeInternal: boolean,
): Promise<SafeHtml | string> {
  const notes = await noteableNotesQuery(db, noteable, { includeInternal, filter: 'only_comments', orderBy: 'created_at', sort: 'asc' })
    .limit(MAX_NOTES).execute();
  if (notes.length === 0) return '';
  const authors = new Map((await findUserBasicsByIds(db, [...new Set(notes.map((n) => n.author_id))])).map((u) => [u.id, u]));
  const items: SafeHtml[] = [];
  for (const n of notes) {
    const author = authors.get(n.author_id);
    items.push(html`<li class="note" id="note_${n.id}"><p class="muted">${author
      ? html`<a href="/${encodeURIComponent(author.username)}">${author.name}</a>` : ''} ${timeTag(n.created_at)}${
      n.internal ? html` <span class="badge">internal</span>` : ''}</p>
${await markdownBlock(markdown, n.note, externalUrl)}</li>`);
  }
  return html`<h2>${notes.length} comment${notes.length === 1 ? '' : 's'}</h2><ul class="list notes" id="notes">${items}</ul>`;
}
