/**
 * The forms of a merge request's Overview (issue 33), each through the domain function the API's
 * route calls and after the same permission decision:
 *
 *   notes      POST …/notes, …/discussions             createNote (create_note; a locked discussion: members)
 *   reply      POST …/discussions/:id/notes            createNote into the thread
 *   resolve    PUT  …/discussions/:id/notes/:note_id   resolveNotes (Developers and the request's author), the whole thread
 *   approve    POST …/approve (with the page's sha)    approveMergeRequest (whoever may update an open request)
 *   unapprove  POST …/unapprove                        unapproveMergeRequest
 *   close, reopen  PUT …?state_event=                  updateMergeRequest (update_merge_request, author, assignees)
 *   merge      PUT  …/merge (sha, squash, should_remove_source_branch)  acceptMergeRequest (can_be_merged_by?);
 *              with merge_when_pipeline_succeeds while the head pipeline runs: setAutoMerge
 *   cancel_auto_merge  POST …/cancel_merge_when_pipeline_succeeds  cancelAutoMerge (updaters and who set it)
 *   diff_note  POST …/discussions with `position`      the diff note check (mergeRequestNoteable diffNote), createNote
 *
 * A request the viewer may not read is the 404 page; an action they may not take on one they may
 * read is the 403 page. A refused form shows the page again with the refusal, at the status the
 * API answers it with.
 */
import type { FastifyReply } from 'fastify';
import { isStorableText } from '../../../db/constraints.ts';
import { nowIso } from '../../../domain/clock.ts';
import { createNote, NOTE_MAX_LENGTH } from '../../../domain/notes/create-note.ts';
import { mentionTodos } from '../../../domain/notes/mention-todos.ts';
import { discussionNotes, resolveNotes } from '../../../domain/notes/notes.queries.ts';
import {
  acceptMergeRequest, AUTO_MERGE_WAITS_FOR, ciAndDiscussionsAllow, requestHeadPipeline,
} from '../../../domain/merge-requests/accept.ts';
import { mergeableState } from '../../../domain/merge-requests/merge.ts';
import {
  approveMergeRequest, cancelAutoMerge, setAutoMerge, unapproveMergeRequest,
} from '../../../domain/merge-requests/mr-actions.ts';
import { canUpdateMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { updateMergeRequest, type WriteRefusal } from '../../../domain/merge-requests/write-merge-request.ts';
import { sourceRefOf } from '../../../domain/merge-requests/fork-source.ts';
import { refTarget } from '../../../domain/repositories/git-read.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { mergeRequestNoteable, type DiffNotePosition } from '../../../http/loaders/noteables.ts';
import { ApiError } from '../../../http/errors.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { overviewPage } from './overview.ts';
import { loadRequest, type RequestPage } from './request-page.ts';

type Form = Record<string, unknown>;

/** A form field as text, or undefined: missing, not a string, or text no column could hold. */
export function formField(p: ProjectPageRequest, name: string, max = 1_000_000): string | undefined {
  const v = ((p.request.body ?? {}) as Form)[name];
  return typeof v === 'string' && v.length <= max && isStorableText(v) ? v : undefined;
}

const DISCUSSION_ID = /^[0-9a-f]{40}$/;
/** A line number as the API's position takes it (P.integer, minimum 1, PostgreSQL's integer range). */
const LINE = /^[1-9]\d{0,8}$/;
/** The API's bound on a position's path (discussions.ts, maxLength 4096). */
const PATH_MAX = 4096;
const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
/** What the API's 409 says as `SHA does not match HEAD of source branch`, in a page's words. */
const MOVED = 'The source branch has changed since the page was loaded:';
const READ_ONLY = 'The repository is temporarily read-only. Please try again later.';

/** The model's refusals in the words of the API (merge-requests.ts `refusal`). */
export function refusalMessages(r: WriteRefusal): string[] {
  if (r.reason === 'same_branch') return ["You can't use same project/branch for source and target"];
  if (r.reason === 'exists') return [`Another open merge request already exists for this source branch: !${r.iid}`];
  const name = (field: string) => field.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return Object.entries(r.errors).flatMap(([field, msgs]) => msgs.map((m) => `${name(field)} ${m}`));
}

async function refuse(
  p: ProjectPageRequest, r: RequestPage, markdown: MarkdownRenderer, status: number, errors: string[], draft?: string,
): Promise<FastifyReply> {
  return sendPage(p.reply, status, await overviewPage(p, r, markdown, { errors, draft }));
}

/** 403 for what the viewer may read but not do. */
function deny(): never {
  throw pageError(403);
}

export async function requestAction(p: ProjectPageRequest, markdown: MarkdownRenderer): Promise<FastifyReply> {
  const action = p.rest[1];
  if (p.rest.length !== 2 || action === undefined) throw pageError(404);
  const r = await loadRequest(p);
  const { db, config } = p.ctx;
  const user = p.session!.user;
  const { project, actor } = p.project;
  const back = () => redirect(p.reply, 'POST', r.path);

  switch (action) {
    case 'notes':
    case 'reply':
    case 'resolve': {
      const nc = mergeRequestNoteable(db, config.storages, p.project, r.mr, r.subject);
      if (!nc) throw pageError(404);
      if (action === 'resolve') {
        const id = formField(p, 'discussion_id', 64);
        if (!id || !DISCUSSION_ID.test(id)) throw pageError(404);
        const thread = await discussionNotes(db, nc.noteable, [id], nc.scope);
        if (thread.length === 0) throw pageError(404);
        if (!thread.some((n) => n.resolvable === 1)) return refuse(p, r, markdown, 400, ['Note is not resolvable']);
        if (!nc.canResolve) deny();
        await resolveNotes(db, id, null, formField(p, 'resolved', 8) === 'false' ? null : user.id, nowIso());
        return redirect(p.reply, 'POST', `${r.path}#discussion_${id}`);
      }
      const body = formField(p, 'note') ?? '';
      let replyTo: { id: string; type: 'DiscussionNote' | 'DiffNote' | 'LegacyDiffNote'; position: string | null } | undefined;
      if (action === 'reply') {
        const id = formField(p, 'discussion_id', 64);
        if (!id || !DISCUSSION_ID.test(id)) throw pageError(404);
        const [first] = await discussionNotes(db, nc.noteable, [id], nc.scope);
        if (!first) throw pageError(404);
        if (!nc.canComment) deny();
        // A system note starts no thread (IndividualNoteDiscussion#can_convert_to_discussion?).
        if (first.system) return refuse(p, r, markdown, 400, ['Discussion can not be replied to.']);
        const diff = first.type === 'DiffNote' || first.type === 'LegacyDiffNote';
        replyTo = diff ? { id, type: first.type as 'DiffNote' | 'LegacyDiffNote', position: first.position }
          : { id, type: 'DiscussionNote', position: null };
      } else if (!nc.canComment) {
        deny();
      }
      const mentions = await mentionTodos(db, body, user.id, (u) => nc.canUserRead(u, false));
      const result = await createNote(db, {
        noteable: nc.noteable, authorId: user.id, body, internal: false, mentions,
        type: replyTo ? replyTo.type : formField(p, 'thread', 8) === 'true' ? 'DiscussionNote' : null,
        ...(replyTo ? { replyTo: replyTo.id, position: replyTo.position } : {}),
      });
      if (!result.ok) {
        const messages = Object.entries(result.errors).flatMap(([, msgs]) => msgs.map((m) => `Note ${m}`));
        return refuse(p, r, markdown, 400, messages, action === 'notes' ? body : undefined);
      }
      return redirect(p.reply, 'POST', `${r.path}#note_${result.value.id}`);
    }

    case 'approve': {
      const sha = formField(p, 'sha', 64);
      if (sha) {
        const head = await refTarget(r.repo.gitDir, sourceRefOf(r.mr));
        if (sha !== head) return refuse(p, r, markdown, 409, [`${MOVED} review the new changes before approving.`]);
      }
      // can_approve?: approve_merge_request (update_merge_request) on an open request.
      if (!canUpdateMergeRequest(actor, project, r.subject) || r.mr.state !== 'opened') deny();
      await approveMergeRequest(db, r.mr, user.id);
      return back();
    }

    case 'unapprove': {
      if (!await unapproveMergeRequest(db, r.mr, user.id)) throw pageError(404);
      return back();
    }

    case 'close':
    case 'reopen': {
      if (!canUpdateMergeRequest(actor, project, r.subject)) deny();
      const result = await updateMergeRequest(db, {
        where: { project, lineage: p.project.lineage }, user, actor, gitDir: r.repo.gitDir,
      }, r.mr, { stateEvent: action });
      if (!result.ok) return refuse(p, r, markdown, result.reason === 'exists' ? 409 : 422, refusalMessages(result));
      return back();
    }

    case 'merge': {
      // Merging is pushing to the target branch (can_be_merged_by?); the API answers 401 to anyone else.
      if (!r.entity.user.can_merge) deny();
      const sha = formField(p, 'sha', 64);
      if (sha !== undefined && !SHA.test(sha)) return refuse(p, r, markdown, 400, ['sha is invalid']);
      const head = await refTarget(r.repo.gitDir, sourceRefOf(r.mr));
      const cannot = 'This merge request cannot be merged now: see its merge status.';
      if (!mergeableState(r.mr) || !head) return refuse(p, r, markdown, 405, [cannot]);
      const options = {
        sha, squash: formField(p, 'squash', 8) === 'true',
        shouldRemoveSourceBranch: formField(p, 'should_remove_source_branch', 8) === 'true',
      };
      // As the API's PUT …/merge: merge_when_pipeline_succeeds waits only for a pipeline still on its way.
      const pipeline = formField(p, 'merge_when_pipeline_succeeds', 8) === 'true' ? await requestHeadPipeline(db, r.mr, head) : undefined;
      if (pipeline && AUTO_MERGE_WAITS_FOR.includes(pipeline.status)) {
        if (sha !== undefined && sha !== head) return refuse(p, r, markdown, 409, [`${MOVED} review the new changes before merging.`]);
        await setAutoMerge(db, r.mr, user.id, options);
        return back();
      }
      if (!await ciAndDiscussionsAllow(db, r.mr, project, head)) return refuse(p, r, markdown, 405, [cannot]);
      const result = await acceptMergeRequest(ciEnvFrom(db, config), project, r.mr, user, options,
        (err) => p.request.log.error({ err }, 'could not run what follows a merge'));
      if (!result.ok) {
        if (result.reason === 'sha_mismatch') {
          return refuse(p, r, markdown, 409, [`${MOVED} review the new changes before merging.`]);
        }
        if (result.reason === 'not_allowed') return refuse(p, r, markdown, 405, [cannot]);
        if (result.reason === 'read_only') return refuse(p, r, markdown, 406, [READ_ONLY]);
        return refuse(p, r, markdown, 406, ['Branch cannot be merged']);
      }
      return back();
    }

    case 'cancel_auto_merge': {
      // can_cancel_auto_merge?: whoever may update the request, or who set it.
      if (!canUpdateMergeRequest(actor, project, r.subject) && r.mr.merge_user_id !== user.id) deny();
      if (r.mr.merge_when_pipeline_succeeds !== 1) {
        return refuse(p, r, markdown, 405, ['This merge request is not set to be merged automatically.']);
      }
      await cancelAutoMerge(db, r.mr, user.id);
      return back();
    }

    case 'diff_note': {
      const nc = mergeRequestNoteable(db, config.storages, p.project, r.mr, r.subject);
      if (!nc?.diffNote) throw pageError(404);
      if (!nc.canComment) deny();
      // Past the API's bound a body is refused by createNote as too long, not taken as blank.
      const body = formField(p, 'note', NOTE_MAX_LENGTH * 2) ?? '';
      const shaField = (name: string) => formField(p, name, 64) ?? '';
      const path = (name: string) => formField(p, name, PATH_MAX);
      const line = (name: string) => {
        const v = formField(p, name, 9);
        return v !== undefined && LINE.test(v) ? Number(v) : undefined;
      };
      const oldPath = path('old_path');
      const newPath = path('new_path');
      const given: DiffNotePosition = {
        base_sha: shaField('base_sha'), start_sha: shaField('start_sha'), head_sha: shaField('head_sha'), position_type: 'text',
        ...(oldPath ? { old_path: oldPath } : {}), ...(newPath ? { new_path: newPath } : {}),
        ...(line('old_line') ? { old_line: line('old_line') } : {}), ...(line('new_line') ? { new_line: line('new_line') } : {}),
      };
      let position: Record<string, unknown>;
      try {
        // The API's check: the versions are commits of the request and the line one of their diff.
        position = await nc.diffNote(given);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // The typed text stays, in the comment form, for the user to place again.
        const gone = 'The line is not in the diff of this merge request any more: reload the changes and comment again.';
        return refuse(p, r, markdown, 400, [gone], body);
      }
      const mentions = await mentionTodos(db, body, user.id, (u) => nc.canUserRead(u, false));
      const result = await createNote(db, {
        noteable: nc.noteable, authorId: user.id, body, internal: false, mentions, type: 'DiffNote', position: JSON.stringify(position),
      });
      if (!result.ok) {
        return refuse(p, r, markdown, 400, Object.entries(result.errors).flatMap(([, msgs]) => msgs.map((m) => `Note ${m}`)), body);
      }
      return redirect(p.reply, 'POST', `${r.path}#note_${result.value.id}`);
    }

    default:
      throw pageError(404);
  }
}
