/**
 * Notes of issues and project snippets (lib/api/notes.rb, helpers/notes_helpers.rb of the Service
 * 15.2; doc/api/notes.md): list (order_by created_at|updated_at, sort, activity_filter), one,
 * create, change and delete. Reading follows the noteable (loaders/noteables.ts: a confidential
 * issue the caller may not see is `404 Issue Not Found`); internal notes are read by Reporters and
 * up only, and a note asked to be internal by anyone else is an ordinary one; commenting takes
 * create_note and, on a locked issue, the right to comment there (403); changing and deleting take
 * the note's author or admin_note (Maintainers), never on a system note.
 * Quick actions in a note's text are kept as text (commands_changes is always `{}`).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { isStorableId } from '../../../db/constraints.ts';
import { createNote, destroyNote, updateNote } from '../../../domain/notes/create-note.ts';
import { mentionTodos } from '../../../domain/notes/mention-todos.ts';
import { canAdminNote, canSetNoteCreatedAt } from '../../../domain/notes/note.policy.ts';
import { findNoteOf, NOTES_FILTERS, noteableNotesQuery } from '../../../domain/notes/notes.queries.ts';
import { forbidden, invalidParams, notFound, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import {
  givenCreatedAt, internalAsked, noteRefusal, PROJECT_NOTEABLES, type NoteableContext,
} from '../../loaders/noteables.ts';
import { NoteSchema, presentNotes } from '../../entities/note.ts';
import { route } from '../../route.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';

const base = { id: P.string({ description: 'ID or URL-encoded full path of the project' }), noteable_id: P.integer() };
const listParams = defineParams({
  ...base,
  order_by: P.optional(P.oneOf(['created_at', 'updated_at'] as const, { default: 'created_at' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
  activity_filter: P.optional(P.oneOf(NOTES_FILTERS, { default: 'all_notes' })),
  ...paginationParams,
});
const noteParams = defineParams({ ...base, note_id: P.integer() });
const createParams = defineParams({
  ...base,
  body: P.string({ description: 'the text (at most 1,000,000 characters)' }),
  confidential: P.optional(P.boolean({ description: 'deprecated name of internal' })),
  internal: P.optional(P.boolean({ description: 'visible to Reporters and up only' })),
  created_at: P.optional(P.string({ maxLength: 64, description: 'administrators and project owners only' })),
  merge_request_diff_head_sha: P.optional(P.string({ maxLength: 64 })),
});
const updateParams = defineParams({
  ...base, note_id: P.integer(), body: P.optional(P.string()), confidential: P.optional(P.boolean({ description: 'ignored' })),
});

const notes: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const present = (nc: NoteableContext, rows: Parameters<typeof presentNotes>[1]) =>
    presentNotes(db, rows, nc.noteable, config.externalUrl);

  /** `noteable.notes.find(id)`: a note of another noteable is no note here (`404 Not found`). */
  async function noteOf(nc: NoteableContext, noteId: number) {
    const note = isStorableId(noteId) ? await findNoteOf(db, nc.noteable, noteId) : undefined;
    if (!note) throw recordNotFound();
    return note;
  }

  for (const kind of PROJECT_NOTEABLES) {
    const path = `/projects/:id/${kind.segment}/:noteable_id/notes`;
    const tags = ['notes'];

    route(app, {
      method: 'GET', url: path, auth: 'required', params: listParams,
      schema: { summary: `The notes of a project ${kind.name}`, tags, response: { 200: Type.Array(NoteSchema) } },
    }, async ({ request, reply, input }) => {
      const nc = await kind.load(request, input.id, input.noteable_id);
      const query = noteableNotesQuery(db, nc.noteable, {
        ...nc.scope, filter: input.activity_filter, orderBy: input.order_by, sort: input.sort,
      });
      return present(nc, await paginate(db, request, reply, query));
    });

    route(app, {
      method: 'GET', url: `${path}/:note_id`, auth: 'required', params: noteParams,
      schema: { summary: `A note of a project ${kind.name}`, tags, response: { 200: NoteSchema } },
    }, async ({ request, input }) => {
      const nc = await kind.load(request, input.id, input.noteable_id);
      const note = await noteOf(nc, input.note_id);
      if (note.internal && !nc.scope.includeInternal) throw notFound('Note');
      return (await present(nc, [note]))[0];
    });

    route(app, {
      method: 'POST', url: path, auth: 'required', params: createParams,
      schema: { summary: `Comment on a project ${kind.name}`, tags, response: { 201: NoteSchema } },
    }, async ({ request, reply, input, caller }) => {
      const nc = await kind.load(request, input.id, input.noteable_id);
      if (!nc.canComment) throw forbidden();
      const internal = internalAsked(nc, input.internal || input.confidential);
      const mentions = await mentionTodos(db, input.body, caller.user.id, (u) => nc.canUserRead(u, internal));
      const result = await createNote(db, {
        noteable: nc.noteable, authorId: caller.user.id, body: input.body, internal, type: null, mentions,
        createdAt: canSetNoteCreatedAt(nc.ctx.actor) ? givenCreatedAt(input.created_at) : undefined,
      });
      if (!result.ok) throw noteRefusal(result.errors);
      reply.code(201);
      return (await present(nc, [result.value]))[0];
    });

    route(app, {
      method: 'PUT', url: `${path}/:note_id`, auth: 'required', params: updateParams,
      schema: { summary: `Change a note of a project ${kind.name}`, tags, response: { 200: NoteSchema } },
    }, async ({ request, input, caller }) => {
      // Grape's `allow_blank: false` on body.
      if (input.body !== undefined && input.body.trim() === '') throw invalidParams(['body is empty']);
      const nc = await kind.load(request, input.id, input.noteable_id);
      const note = await noteOf(nc, input.note_id);
      if (!canAdminNote(nc.ctx.actor, nc.ctx.project, note)) throw forbidden();
      const result = await updateNote(db, nc.noteable, note, input.body, caller.user.id);
      if (!result.ok) throw noteRefusal(result.errors);
      return (await present(nc, [result.value]))[0];
    });

    route(app, {
      method: 'DELETE', url: `${path}/:note_id`, auth: 'required', params: noteParams,
      schema: { summary: `Delete a note of a project ${kind.name}`, tags },
    }, async ({ request, reply, input }) => {
      const nc = await kind.load(request, input.id, input.noteable_id);
      const note = await noteOf(nc, input.note_id);
      if (!canAdminNote(nc.ctx.actor, nc.ctx.project, note)) throw forbidden();
      checkUnmodifiedSince(request, note.updated_at);
      if (!(await destroyNote(db, nc.noteable, note.id))) throw recordNotFound();
      return reply.code(204).send();
    });
  }
};

export default notes;
