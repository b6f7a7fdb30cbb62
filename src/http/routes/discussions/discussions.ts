/**
 * Threads of issues, project snippets and commits (lib/api/discussions.rb of the Service 15.2;
 * doc/api/discussions.md): list (paged by thread, in the order they were started), one, start a
 * thread, reply, change and delete a thread's note. A note made through the notes API is an
 * individual thread of one note; replying to one on an issue turns it into a thread
 * (DiscussionNote), elsewhere it is refused (`Discussion can not be replied to.`). Permissions are
 * the notes API's (notes.ts). Notes of a thread the caller may not read (internal ones) are left
 * out, and a thread with none left is no thread (`404 Discussion Not Found`).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isStorableId } from '../../../db/constraints.ts';
import { createNote, destroyNote, updateNote } from '../../../domain/notes/create-note.ts';
import { mentionTodos } from '../../../domain/notes/mention-todos.ts';
import { canAdminNote, canSetNoteCreatedAt } from '../../../domain/notes/note.policy.ts';
import { discussionIdsQuery, discussionNotes, findNoteOf, resolveNotes } from '../../../domain/notes/notes.queries.ts';
import { nowIso } from '../../../domain/clock.ts';
import { badRequest, forbidden, invalidParams, notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, INT32_MAX, INT32_MIN, P, type ParamsOf } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import {
  givenCreatedAt, internalAsked, loadCommitNoteable, noteRefusal, PROJECT_NOTEABLES, type NoteableContext,
} from '../../loaders/noteables.ts';
import { DiscussionSchema, NoteSchema, presentDiscussions, presentNotes } from '../../entities/note.ts';
import { route } from '../../route.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';
import type { Caller } from '../../context.ts';

const projectId = P.string({ description: 'ID or URL-encoded full path of the project' });
/** Issues by iid and snippets by id (integerId below), commits by sha or any revision. */
const noteableId = P.string({ maxLength: 1024, description: 'the issue iid, snippet id or commit sha' });
/** A thread id is 40 hex characters; anything longer names none. */
const discussionId = P.string({ maxLength: 255 });

function paramsFor() {
  const base = { id: projectId, noteable_id: noteableId };
  return {
    list: defineParams({ ...base, ...paginationParams }),
    one: defineParams({ ...base, discussion_id: discussionId }),
    create: defineParams({
      ...base, body: P.string(), created_at: P.optional(P.string({ maxLength: 64 })),
      confidential: P.optional(P.boolean()), internal: P.optional(P.boolean()),
      position: P.optional(P.object({
        base_sha: P.string({ maxLength: 64 }), start_sha: P.string({ maxLength: 64 }), head_sha: P.string({ maxLength: 64 }),
        position_type: P.oneOf(['text'] as const), old_path: P.optional(P.string({ maxLength: 4096 })),
        new_path: P.optional(P.string({ maxLength: 4096 })), old_line: P.optional(P.integer({ minimum: 1 })),
        new_line: P.optional(P.integer({ minimum: 1 })),
      }, { description: 'a merge request diff note: the versions and the line it sits on' })),
    }),
    reply: defineParams({
      ...base, discussion_id: discussionId, body: P.string(), created_at: P.optional(P.string({ maxLength: 64 })),
    }),
    update: defineParams({
      ...base, discussion_id: discussionId, note_id: P.integer(), body: P.optional(P.string()), resolved: P.optional(P.boolean()),
    }, { mutuallyExclusive: [['body', 'resolved']] }),
    note: defineParams({ ...base, discussion_id: discussionId, note_id: P.integer() }),
    resolve: defineParams({ ...base, discussion_id: discussionId, resolved: P.boolean() }),
  };
}
type Params = ReturnType<typeof paramsFor>;
type In<K extends keyof Params> = Omit<ParamsOf<Params[K]>, 'noteable_id' | 'id'>;

const discussions: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const url = config.externalUrl;

  async function thread(nc: NoteableContext, id: string) {
    const notes = await discussionNotes(db, nc.noteable, [id], nc.scope);
    if (notes.length === 0) throw notFound('Discussion');
    return notes;
  }

  async function noteOf(nc: NoteableContext, noteId: number) {
    const note = isStorableId(noteId) ? await findNoteOf(db, nc.noteable, noteId) : undefined;
    if (!note) throw recordNotFound();
    return note;
  }

  const handlers = {
    async list(nc: NoteableContext, request: FastifyRequest, reply: FastifyReply) {
      const ids = (await paginate(db, request, reply, discussionIdsQuery(db, nc.noteable, nc.scope))).map((r) => r.discussion_id);
      return presentDiscussions(db, ids, await discussionNotes(db, nc.noteable, ids, nc.scope), nc.noteable, url);
    },
    async one(nc: NoteableContext, input: In<'one'>) {
      return (await presentDiscussions(db, [input.discussion_id], await thread(nc, input.discussion_id), nc.noteable, url))[0];
    },
    async create(nc: NoteableContext, input: In<'create'>, caller: Caller, reply: FastifyReply) {
      if (!nc.canComment) throw forbidden();
      const internal = internalAsked(nc, input.internal || input.confidential);
      const mentions = await mentionTodos(db, input.body, caller.user.id, (u) => nc.canUserRead(u, internal));
      const position = input.position && nc.diffNote ? await nc.diffNote(input.position) : null;
      const result = await createNote(db, {
        noteable: nc.noteable, authorId: caller.user.id, body: input.body, internal, mentions,
        type: position ? 'DiffNote' : 'DiscussionNote', position: position ? JSON.stringify(position) : null,
        createdAt: canSetNoteCreatedAt(nc.ctx.actor) ? givenCreatedAt(input.created_at) : undefined,
      });
      // render_validation_error!(note): the model's errors as the message.
      if (!result.ok) throw validationFailed(result.errors);
      reply.code(201);
      const id = result.value.discussion_id;
      return (await presentDiscussions(db, [id], [result.value], nc.noteable, url))[0];
    },
    async reply(nc: NoteableContext, input: In<'reply'>, caller: Caller, reply: FastifyReply) {
      const notes = await thread(nc, input.discussion_id);
      const first = notes[0];
      if (!nc.canComment) throw forbidden();
      // An individual note becomes a thread only on issues (Noteable#supports_replying_to_individual_notes?),
      // and never a system note (IndividualNoteDiscussion#can_convert_to_discussion?).
      if (first.type === null && ((nc.noteable.type !== 'Issue' && nc.noteable.type !== 'MergeRequest') || first.system)) {
        throw badRequest('Discussion can not be replied to.');
      }
      // A reply to an internal thread is internal too (Notes::BuildService).
      const internal = first.internal === 1;
      const mentions = await mentionTodos(db, input.body, caller.user.id, (u) => nc.canUserRead(u, internal));
      const result = await createNote(db, {
        noteable: nc.noteable, authorId: caller.user.id, body: input.body, internal, mentions,
        // A reply to a line comment sits on the same line (a DiffNote's replies are DiffNotes).
        type: first.type === 'LegacyDiffNote' || first.type === 'DiffNote' ? first.type : 'DiscussionNote', replyTo: input.discussion_id,
        position: first.type === 'LegacyDiffNote' || first.type === 'DiffNote' ? first.position : null,
        createdAt: canSetNoteCreatedAt(nc.ctx.actor) ? givenCreatedAt(input.created_at) : undefined,
      });
      if (!result.ok) throw validationFailed(result.errors);
      reply.code(201);
      return (await presentNotes(db, [result.value], nc.noteable, url))[0];
    },
    async note(nc: NoteableContext, input: In<'note'>) {
      // One note of the thread, as the viewer may see the thread (internal notes to Reporters and up).
      const note = (await thread(nc, input.discussion_id)).find((n) => n.id === input.note_id);
      if (!note) throw recordNotFound();
      return (await presentNotes(db, [note], nc.noteable, url))[0];
    },
    async update(nc: NoteableContext, input: In<'update'>, caller: Caller) {
      if (input.body === undefined && input.resolved === undefined) {
        throw invalidParams(['body, resolved are missing, exactly one parameter must be provided']);
      }
      const note = await noteOf(nc, input.note_id);
      // Only merge request threads can be resolved (the Service's resolve_note: Developers, and the request's author).
      if (input.resolved !== undefined) {
        if (note.resolvable !== 1 || note.discussion_id !== input.discussion_id) throw badRequest('Note is not resolvable');
        if (!nc.canResolve) throw forbidden();
        await resolveNotes(db, note.discussion_id, note.id, input.resolved ? caller.user.id : null, nowIso());
        return (await presentNotes(db, [(await noteOf(nc, note.id))], nc.noteable, url))[0];
      }
      if (!canAdminNote(nc.ctx.actor, nc.ctx.project, note)) throw forbidden();
      const result = await updateNote(db, nc.noteable, note, input.body, caller.user.id);
      if (!result.ok) throw noteRefusal(result.errors);
      return (await presentNotes(db, [result.value], nc.noteable, url))[0];
    },
    /**
     * Resolves or unresolves a whole thread (lib/api/discussions.rb, resolvable noteables only:
     * Discussion#resolve! / #unresolve!); forbidden unless the thread is resolvable and the caller
     * may resolve it (Discussion#can_resolve?: Developers, and the request's author).
     */
    async resolve(nc: NoteableContext, input: In<'resolve'>, caller: Caller) {
      const notes = await thread(nc, input.discussion_id);
      if (!notes.some((n) => n.resolvable === 1) || !nc.canResolve) throw forbidden();
      await resolveNotes(db, input.discussion_id, null, input.resolved ? caller.user.id : null, nowIso());
      return (await presentDiscussions(db, [input.discussion_id], await thread(nc, input.discussion_id), nc.noteable, url))[0];
    },
    async remove(nc: NoteableContext, input: In<'note'>, request: FastifyRequest, reply: FastifyReply) {
      const note = await noteOf(nc, input.note_id);
      if (!canAdminNote(nc.ctx.actor, nc.ctx.project, note)) throw forbidden();
      checkUnmodifiedSince(request, note.updated_at);
      if (!(await destroyNote(db, nc.noteable, note.id))) throw recordNotFound();
      return reply.code(204).send();
    },
  };

  const tags = ['discussions'];

  const params = paramsFor();

  function register(k: {
    prefix: string;
    name: string;
    load: (request: FastifyRequest, input: { id: string; noteable_id: string }) => Promise<NoteableContext>;
    /** Threads that can be resolved whole (merge requests'). */
    resolvable?: boolean;
  }): void {
    const path = `${k.prefix}/discussions`;
    route(app, {
      method: 'GET', url: path, auth: 'required', params: params.list,
      schema: { summary: `The threads of ${k.name}`, tags, response: { 200: Type.Array(DiscussionSchema) } },
    }, async ({ request, reply, input }) => handlers.list(await k.load(request, input), request, reply));
    route(app, {
      method: 'GET', url: `${path}/:discussion_id`, auth: 'required', params: params.one,
      schema: { summary: `A thread of ${k.name}`, tags, response: { 200: DiscussionSchema } },
    }, async ({ request, input }) => handlers.one(await k.load(request, input), input));
    route(app, {
      method: 'POST', url: path, auth: 'required', params: params.create,
      schema: { summary: `Start a thread on ${k.name}`, tags, response: { 201: DiscussionSchema } },
    }, async ({ request, reply, input, caller }) => handlers.create(await k.load(request, input), input, caller, reply));
    if (k.resolvable) {
      route(app, {
        method: 'PUT', url: `${path}/:discussion_id`, auth: 'required', params: params.resolve,
        schema: { summary: `Resolve or unresolve a thread of ${k.name}`, tags, response: { 200: DiscussionSchema } },
      }, async ({ request, input, caller }) => handlers.resolve(await k.load(request, input), input, caller));
    }
    route(app, {
      method: 'POST', url: `${path}/:discussion_id/notes`, auth: 'required', params: params.reply,
      schema: { summary: `Reply to a thread of ${k.name}`, tags, response: { 201: NoteSchema } },
    }, async ({ request, reply, input, caller }) => handlers.reply(await k.load(request, input), input, caller, reply));
    route(app, {
      method: 'GET', url: `${path}/:discussion_id/notes/:note_id`, auth: 'required', params: params.note,
      schema: { summary: `A note of a thread of ${k.name}`, tags, response: { 200: NoteSchema } },
    }, async ({ request, input }) => handlers.note(await k.load(request, input), input));
    route(app, {
      method: 'PUT', url: `${path}/:discussion_id/notes/:note_id`, auth: 'required', params: params.update,
      schema: { summary: `Change a note of a thread of ${k.name}`, tags, response: { 200: NoteSchema } },
    }, async ({ request, input, caller }) => handlers.update(await k.load(request, input), input, caller));
    route(app, {
      method: 'DELETE', url: `${path}/:discussion_id/notes/:note_id`, auth: 'required', params: params.note,
      schema: { summary: `Delete a note of a thread of ${k.name}`, tags },
    }, async ({ request, reply, input }) => handlers.remove(await k.load(request, input), input, request, reply));
  }

  for (const kind of PROJECT_NOTEABLES) {
    register({
      prefix: `/projects/:id/${kind.segment}/:noteable_id`, name: `a project ${kind.name}`,
      load: (request, input) => kind.load(request, input.id, integerId(input.noteable_id)),
      resolvable: kind.segment === 'merge_requests',
    });
  }
  register({
    prefix: '/projects/:id/repository/commits/:noteable_id', name: 'a commit',
    load: (request, input) => loadCommitNoteable(request, input.id, input.noteable_id),
  });
};

/**
 * An issue's iid or a snippet's id in the path the routes share with commits' shas: Grape's
 * Integer coercion (`noteable_id is invalid`); beyond the column's range it names no row.
 */
function integerId(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw invalidParams(['noteable_id is invalid']);
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : 0;
}

export default discussions;
