/**
 * Award emoji on issues, project snippets and their notes (lib/api/award_emoji.rb of the Service
 * 15.2; doc/api/award_emoji.md). Unlike the notes API, the awardable is found without asking
 * whether the caller may see it: a missing issue, snippet, note or award is `404 Not found`, and
 * one the caller may not read is `404 Award Emoji Not Found` (as is awarding where the caller may
 * not: award_emoji, and on a locked issue membership). A refused award is the model's message as
 * `404 Award Emoji <message> Not Found` (a name that is no emoji, one already given by the caller).
 * Only the award's user or an administrator removes it; anyone else gets `401 Unauthorized`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isStorableId } from '../../../db/constraints.ts';
import { awardEmoji } from '../../../domain/award-emoji/award-emoji.ts';
import { awardsQuery, deleteAward, findAward, type AwardableRef } from '../../../domain/award-emoji/award-emoji.queries.ts';
import { findIssueByIid } from '../../../domain/issues/issues.queries.ts';
import { canReadIssue } from '../../../domain/issues/issue.policy.ts';
import { canReadProjectSnippet } from '../../../domain/notes/noteable.ts';
import { canReadInternalNotes } from '../../../domain/notes/note.policy.ts';
import { findNoteOf } from '../../../domain/notes/notes.queries.ts';
import { ACCESS_LEVELS } from '../../../domain/permissions/access.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findSnippetById } from '../../../domain/snippets/snippets.queries.ts';
import { findMergeRequestByIid, peopleOf } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { notFound, recordNotFound, unauthorized } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { issueSubject } from '../../loaders/issues.ts';
import { AwardEmojiSchema, presentAwards } from '../../entities/award-emoji.ts';
import { route } from '../../route.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';

interface Awardable {
  ref: AwardableRef;
  canRead: boolean;
  canAward: boolean;
}

const projectId = P.string({ description: 'ID or URL-encoded full path of the project' });
/** Emoji names are short; a longer one is no emoji either (the model says so). */
const emojiName = P.string({ maxLength: 255, description: 'the emoji name without colons, e.g. thumbsup' });

const awards: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function issueAwardable(ctx: ProjectContext, iid: number): Promise<Awardable> {
    const issue = isStorableId(iid) ? await findIssueByIid(db, ctx.project.id, iid) : undefined;
    if (!issue) throw recordNotFound();
    const subject = await issueSubject(db, issue);
    const canRead = canReadIssue(ctx.actor, ctx.project, subject);
    // IssuablePolicy: a locked issue takes reactions from project members only.
    const member = ctx.actor.accessLevel >= ACCESS_LEVELS.guest || Boolean(ctx.actor.user?.admin);
    const canAward = canRead && canOnProject(ctx.actor, 'award_emoji', ctx.project) && (!subject.discussion_locked || member);
    return { ref: { type: 'Issue', id: issue.id }, canRead, canAward };
  }

  async function snippetAwardable(ctx: ProjectContext, id: number): Promise<Awardable> {
    const snippet = isStorableId(id) ? await findSnippetById(db, id) : undefined;
    if (!snippet || snippet.project_id !== ctx.project.id) throw recordNotFound();
    const canRead = canReadProjectSnippet(ctx.actor, ctx.project, snippet);
    return { ref: { type: 'Snippet', id: snippet.id }, canRead, canAward: canRead && canOnProject(ctx.actor, 'award_emoji', ctx.project) };
  }

  async function mergeRequestAwardable(ctx: ProjectContext, iid: number): Promise<Awardable> {
    const mr = isStorableId(iid) ? await findMergeRequestByIid(db, ctx.project.id, iid) : undefined;
    if (!mr) throw recordNotFound();
    const assignees = (await peopleOf(db, 'merge_request_assignees', [mr.id])).get(mr.id) ?? [];
    const subject = { author_id: mr.author_id, assignee_ids: assignees, discussion_locked: mr.discussion_locked };
    const canRead = canReadMergeRequest(ctx.actor, ctx.project);
    const member = ctx.actor.accessLevel >= ACCESS_LEVELS.guest || Boolean(ctx.actor.user?.admin);
    const canAward = canRead && canOnProject(ctx.actor, 'award_emoji', ctx.project) && (subject.discussion_locked !== 1 || member);
    return { ref: { type: 'MergeRequest', id: mr.id }, canRead, canAward };
  }

  /** A note of the awardable: read and awarded as its noteable is (internal notes from Reporters up). */
  async function noteAwardable(ctx: ProjectContext, parent: Awardable, noteId: number): Promise<Awardable> {
    const type = parent.ref.type as 'Issue' | 'MergeRequest' | 'Snippet';
    const noteable = { type, id: parent.ref.id, commitId: null, projectId: ctx.project.id, iid: null };
    const note = isStorableId(noteId) ? await findNoteOf(db, noteable, noteId) : undefined;
    if (!note) throw recordNotFound();
    const canRead = parent.canRead && (!note.internal || canReadInternalNotes(ctx.actor));
    return { ref: { type: 'Note', id: note.id }, canRead, canAward: canRead && parent.canAward };
  }

  const kinds = [
    { segment: 'issues', param: 'issue_iid', name: 'an issue', find: issueAwardable },
    { segment: 'snippets', param: 'snippet_id', name: 'a project snippet', find: snippetAwardable },
    { segment: 'merge_requests', param: 'merge_request_iid', name: 'a merge request', find: mergeRequestAwardable },
  ] as const;

  for (const kind of kinds) {
    for (const onNote of [false, true]) {
      const path = `/projects/:id/${kind.segment}/:${kind.param}${onNote ? '/notes/:note_id' : ''}/award_emoji`;
      const what = onNote ? `a note of ${kind.name}` : kind.name;
      const base = { id: projectId, [kind.param]: P.integer(), ...(onNote ? { note_id: P.integer() } : {}) };
      const tags = ['award_emoji'];

      const load = async (request: FastifyRequest, input: Record<string, unknown>): Promise<Awardable> => {
        const ctx = await loadProject(request, input.id as string);
        const parent = await kind.find(ctx, input[kind.param] as number);
        return onNote ? noteAwardable(ctx, parent, input.note_id as number) : parent;
      };
      const readable = async (request: FastifyRequest, input: Record<string, unknown>) => {
        const awardable = await load(request, input);
        if (!awardable.canRead) throw notFound('Award Emoji');
        return awardable;
      };

      route(app, {
        method: 'GET', url: path, auth: 'required', params: defineParams({ ...base, ...paginationParams }),
        schema: { summary: `The award emoji of ${what}`, tags, response: { 200: Type.Array(AwardEmojiSchema) } },
      }, async ({ request, reply, input }) => {
        const awardable = await readable(request, input);
        return presentAwards(db, await paginate(db, request, reply, awardsQuery(db, awardable.ref)), config.externalUrl);
      });

      route(app, {
        method: 'GET', url: `${path}/:award_id`, auth: 'required', params: defineParams({ ...base, award_id: P.integer() }),
        schema: { summary: `An award emoji of ${what}`, tags, response: { 200: AwardEmojiSchema } },
      }, async ({ request, input }) => {
        const awardable = await readable(request, input);
        const award = isStorableId(input.award_id) ? await findAward(db, awardable.ref, input.award_id) : undefined;
        if (!award) throw recordNotFound();
        return (await presentAwards(db, [award], config.externalUrl))[0];
      });

      route(app, {
        method: 'POST', url: path, auth: 'required', params: defineParams({ ...base, name: emojiName }),
        schema: { summary: `Award an emoji to ${what}`, tags, response: { 201: AwardEmojiSchema } },
      }, async ({ request, reply, input, caller }) => {
        const awardable = await load(request, input);
        if (!awardable.canRead || !awardable.canAward) throw notFound('Award Emoji');
        const result = await awardEmoji(db, awardable.ref, caller.user.id, input.name);
        if (!result.ok) throw notFound(`Award Emoji ${result.message}`);
        reply.code(201);
        return (await presentAwards(db, [result.value], config.externalUrl))[0];
      });

      route(app, {
        method: 'DELETE', url: `${path}/:award_id`, auth: 'required', params: defineParams({ ...base, award_id: P.integer() }),
        schema: { summary: `Remove an award emoji from ${what}`, tags },
      }, async ({ request, reply, input, caller }) => {
        const awardable = await load(request, input);
        const award = isStorableId(input.award_id) ? await findAward(db, awardable.ref, input.award_id) : undefined;
        if (!award) throw recordNotFound();
        if (award.user_id !== caller.user.id && caller.user.admin !== 1) throw unauthorized();
        checkUnmodifiedSince(request, award.updated_at);
        await deleteAward(db, award.id);
        return reply.code(204).send();
      });
    }
  }
};

export default awards;
