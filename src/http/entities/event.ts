/**
 * The event entity of the activity feeds (lib/api/entities/event.rb, 15.2) with its push payload
 * (PushEventPayload, as `push_data`) and, for comments, the note (lib/api/entities/note.rb, its
 * fields straight from the notes table). `action_name` is Event#action_name; `target_iid` is the
 * target's iid when it has one (issues, milestones, merge requests), else its id; `target_title`
 * the target's title (a note's is its noteable's: Note delegates title to it).
 */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import type { EventRow, NoteRow, PushEventPayloadsTable } from '../../db/tables/notes.ts';
import type { NoteableType } from '../../domain/notes/noteable.ts';
import { NoteSchema, presentNote, type Note } from './note.ts';
import type { EventTargets } from '../../domain/events/events.queries.ts';
import type { Selectable } from 'kysely';
import { presentUserBasic, UserBasicSchema } from './user.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PushEventPayloadSchema = Type.Object({
  commit_count: Type.Integer(),
  action: Type.String(),
  ref_type: Type.String(),
  commit_from: Nullable(Type.String()),
  commit_to: Nullable(Type.String()),
  ref: Nullable(Type.String()),
  commit_title: Nullable(Type.String()),
  ref_count: Nullable(Type.Integer()),
}, { title: 'PushEventPayload' });

export const EventSchema = Type.Object({
  id: Type.Integer(),
  project_id: Nullable(Type.Integer()),
  action_name: Type.String(),
  target_id: Nullable(Type.Integer()),
  target_iid: Nullable(Type.Integer()),
  target_type: Nullable(Type.String()),
  author_id: Type.Integer(),
  target_title: Nullable(Type.String()),
  created_at: Type.String(),
  note: Type.Optional(NoteSchema),
  author: Type.Optional(UserBasicSchema),
  push_data: Type.Optional(PushEventPayloadSchema),
  // Last, as the Service's entity exposes it (always set; optional only so the serializer keeps it after the optional keys).
  author_username: Type.Optional(Nullable(Type.String())),
}, { title: 'Event' });

export type Event = Static<typeof EventSchema>;
type Payload = Selectable<PushEventPayloadsTable>;

/** Event#action_name (15.2). */
export function actionName(e: Pick<EventRow, 'action' | 'target_type'>, payload: Payload | undefined): string {
  switch (e.action) {
    case 'pushed':
      if (payload?.action === 'created') return 'pushed new';
      if (payload?.action === 'removed') return 'deleted';
      return 'pushed to';
    case 'closed': return 'closed';
    case 'merged': return 'accepted';
    case 'joined': return 'joined';
    case 'left': return 'left';
    case 'expired': return 'removed due to membership expiration from';
    case 'destroyed': return 'destroyed';
    case 'commented': return 'commented on';
    case 'approved': return 'approved';
    default:
      // A wiki page's creation and change read so (Event#created_wiki_page?, #updated_wiki_page?).
      if (e.target_type === 'WikiPage::Meta' && (e.action === 'created' || e.action === 'updated')) return e.action;
      // A project's creation has no target (Event#created_project_action?); kiln imports nothing, so never 'imported'.
      return e.action === 'created' && e.target_type === null ? 'created' : 'opened';
  }
}

interface Presenting { externalUrl: string }

/** A comment's Note entity (the notes area's presentation), with its author when the author is still known. */
function presentEventNote(n: NoteRow, t: EventTargets, o: Presenting): Note | undefined {
  if (!t.users.has(n.author_id)) return undefined;
  const iid = n.noteable_type === 'Issue' && n.noteable_id !== null ? t.issues.get(n.noteable_id)?.iid ?? null : null;
  const userOpts = { externalUrl: o.externalUrl, canReadProfile: true };
  // eventTargetsOf loads every note's author and resolver.
  const author = (id: number) => presentUserBasic(t.users.get(id)!, {}, userOpts);
  return presentNote(n, { type: n.noteable_type as NoteableType, iid }, author);
}

function titleAndIid(e: EventRow, t: EventTargets): { title: string | null; iid: number | null } {
  const id = e.target_id;
  if (id === null) return { title: null, iid: null };
  switch (e.target_type) {
    case 'Issue': {
      const issue = t.issues.get(id);
      return { title: issue?.title ?? null, iid: issue?.iid ?? id };
    }
    case 'Milestone': {
      const m = t.milestones.get(id);
      return { title: m?.title ?? null, iid: m?.iid ?? id };
    }
    case 'Snippet': return { title: t.snippets.get(id)?.title ?? null, iid: id };
    case 'WikiPage::Meta': return { title: t.wikiPages.get(id) ?? null, iid: id };
    case 'Note': {
      const note = t.notes.get(id);
      const nid = note?.noteable_id ?? null;
      let title: string | null = null;
      if (note?.noteable_type === 'Issue' && nid !== null) title = t.issues.get(nid)?.title ?? null;
      if (note?.noteable_type === 'Snippet' && nid !== null) title = t.snippets.get(nid)?.title ?? null;
      return { title, iid: id };
    }
    default: return { title: null, iid: id };
  }
}

export function presentEvent(e: EventRow, t: EventTargets, o: Presenting): Event {
  const author: UserRow | undefined = t.users.get(e.author_id);
  const payload = t.payloads.get(e.id);
  const { title, iid } = titleAndIid(e, t);
  const note = e.target_type === 'Note' && e.target_id !== null ? t.notes.get(e.target_id) : undefined;
  const out: Event = {
    id: e.id, project_id: e.project_id, action_name: actionName(e, payload),
    target_id: e.target_id, target_iid: iid, target_type: e.target_type, author_id: e.author_id,
    target_title: title, created_at: e.created_at, author_username: author?.username ?? null,
  };
  const presentedNote = note && presentEventNote(note, t, o);
  if (presentedNote) out.note = presentedNote;
  if (author) out.author = presentUserBasic(author, {}, { externalUrl: o.externalUrl, canReadProfile: true });
  if (e.action === 'pushed' && payload) {
    out.push_data = {
      commit_count: payload.commit_count, action: payload.action, ref_type: payload.ref_type, commit_from: payload.commit_from,
      commit_to: payload.commit_to, ref: payload.ref, commit_title: payload.commit_title, ref_count: payload.ref_count,
    };
  }
  return out;
}
