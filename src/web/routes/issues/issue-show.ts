/**
 * One issue's page (`/<project>/-/issues/<iid>`, the API's `web_url`): title, state, author, the
 * description rendered by the API's Markdown renderer, labels, milestone, assignees, due date,
 * award emoji counts and the discussion — notes and system notes in order, each at its
 * `#note_<id>` anchor (the API's note web_urls) — with the forms to comment, to reply to a thread
 * and to close or reopen.
 *
 * Every decision is the API's: the issue is found and read as loaders/issues.ts does (a
 * confidential issue the viewer may not read is the same 404 page as a missing one), notes are
 * read as GET …/notes reads them (read_note, internal ones from Reporters up), commenting is
 * canCommentOnIssue (a locked discussion takes members only), closing and reopening canUpdateIssue,
 * and the writes are the API's own domain functions (createNote, updateIssue).
 */
import type { IssueRow } from '../../../db/tables/issues.ts';
import type { NoteRow } from '../../../db/tables/notes.ts';
import type { UserRow } from '../../../db/types.ts';
import { INT32_MAX } from '../../../http/input/params.ts';
import { findIssueByIid } from '../../../domain/issues/issues.queries.ts';
import { canCommentOnIssue, canReadIssue, canUpdateIssue, type IssueSubject } from '../../../domain/issues/issue.policy.ts';
import { updateIssue } from '../../../domain/issues/update-issue.ts';
import { createNote, NOTE_MAX_LENGTH } from '../../../domain/notes/create-note.ts';
import { mentionTodos } from '../../../domain/notes/mention-todos.ts';
import { canReadInternalNotes } from '../../../domain/notes/note.policy.ts';
import type { NoteableRef } from '../../../domain/notes/noteable.ts';
import { discussionNotes, noteableNotesQuery } from '../../../domain/notes/notes.queries.ts';
import { awardsQuery } from '../../../domain/award-emoji/award-emoji.queries.ts';
import { findEmoji } from '../../../domain/user-status/emoji.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import { issueSubject } from '../../../http/loaders/issues.ts';
import { issueActivity } from './issue-activity.ts';
import { issueProjectPaths, presentIssues } from '../../../http/entities/issue.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, redirect, sendPage } from '../../layout.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import {
  issuePath, issuesPath, issueState, labelChip, labelDetails, localPath, personLink, renderMarkdown, timeTag, type Form, formText,
} from '../../issue-view.ts';

/** Notes shown on one page: an issue with more shows its first ones and says so. */
const MAX_NOTES = 500;
/** Award rows read to count them. */
const MAX_AWARDS = 5000;

export interface LoadedIssue {
  issue: IssueRow;
  subject: IssueSubject;
  ref: NoteableRef;
}

/** The issue `rest[0]` names as the viewer may read it, else the 404 page (a confidential one included). */
export async function loadIssuePage(p: ProjectPageRequest): Promise<LoadedIssue> {
  const raw = p.rest[0] ?? '';
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > INT32_MAX) throw pageError(404);
  const issue = await findIssueByIid(p.ctx.db, p.project.project.id, Number(raw));
  if (!issue) throw pageError(404);
  const subject = await issueSubject(p.ctx.db, issue);
  if (!canReadIssue(p.project.actor, p.project.project, subject)) throw pageError(404);
  return { issue, subject, ref: { type: 'Issue', id: issue.id, commitId: null, projectId: p.project.project.id, iid: issue.iid } };
}

const csrf = (p: ProjectPageRequest) => html`<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">`;

function awardCounts(names: string[]): SafeHtml {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  if (counts.size === 0) return html``;
  return html`<ul class="awards" aria-label="Award emoji">${[...counts].map(([name, n]) => {
    const emoji = findEmoji(name);
    return html`<li title="${name}"><span aria-hidden="true">${emoji?.char ?? `:${name}:`}</span><span class="visually-hidden">${name}</span> ${n}</li>`;
  })}</ul>`;
}

interface ShowOptions { errors?: string[]; draft?: string }

export async function showIssuePage(p: ProjectPageRequest, markdown: MarkdownRenderer, o: ShowOptions = {}): Promise<SafeHtml> {
  const { db, config } = p.ctx;
  const { issue, subject, ref } = await loadIssuePage(p);
  const { actor, project } = p.project;
  const viewer = p.session?.user ?? null;
  const projects = await issueProjectPaths(db, [issue.project_id]);
  const [[presented], events] = await Promise.all([
    presentIssues(db, [issue], {
      externalUrl: config.externalUrl, projects, viewerId: viewer?.id ?? null, from: { project: project.id }, withLabelsDetails: true,
    }),
    issueActivity(db, config.externalUrl, issue.id, project.id, projects.get(project.id)!),
  ]);
  const i = presented!;
  const readsNotes = canOnProject(actor, 'read_note', project);
  const notes = readsNotes
    ? await noteableNotesQuery(db, ref, {
      includeInternal: canReadInternalNotes(actor), filter: 'all_notes', orderBy: 'created_at', sort: 'asc',
    }).limit(MAX_NOTES + 1).execute()
    : [];
  const shown = notes.slice(0, MAX_NOTES);
  const [authors, awards, description, bodies] = await Promise.all([
    findUserBasicsByIds(db, [...new Set([
      ...shown.map((n) => n.author_id), ...events.flatMap((e) => (e.userId === null ? [] : [e.userId])),
    ])]),
    awardsQuery(db, { type: 'Issue', id: issue.id }).limit(MAX_AWARDS).execute(),
    issue.description ? renderMarkdown(markdown, p.ctx, viewer, p.project, issue.description) : Promise.resolve(null),
    Promise.all(shown.map((n) => renderMarkdown(markdown, p.ctx, viewer, p.project, n.note))),
  ]);
  const authorById = new Map(authors.map((u) => [u.id, u]));
  const bodyById = new Map(shown.map((n, at) => [n.id, bodies[at]!]));
  const canComment = p.signedIn !== null && canCommentOnIssue(actor, project, subject);
  const canUpdate = p.signedIn !== null && canUpdateIssue(actor, project, subject);
  const self = issuePath(p.project.fullPath, issue.iid);

  // Threads in the order they were started, each note in order (discussionIdsQuery's order).
  const threads = new Map<string, NoteRow[]>();
  for (const n of shown) {
    const list = threads.get(n.discussion_id);
    if (list) list.push(n);
    else threads.set(n.discussion_id, [n]);
  }
  const noteItem = (n: NoteRow) => html`<li class="note${n.system ? ' system-note' : ''}" id="note_${n.id}">
<div class="note-head">${personLink(authorById.get(n.author_id))} <a class="muted" href="#note_${n.id}">${timeTag(n.created_at)}</a>${
  n.internal ? html` <span class="badge">Internal note</span>` : ''}</div>
<div class="markdown note-body">${bodyById.get(n.id) ?? ''}</div>
</li>`;
  const replyForm = (first: NoteRow) => html`<details class="reply"><summary>Reply</summary>
<form method="post" action="${self}/notes">${csrf(p)}<input type="hidden" name="discussion_id" value="${first.discussion_id}">
<label for="reply-${first.id}">Reply to this thread</label><textarea id="reply-${first.id}" name="note" rows="3" maxlength="${NOTE_MAX_LENGTH}" required></textarea>
<button type="submit">Reply</button></form></details>`;
  const threadItems = [...threads.values()].map((list) => {
    const first = list[0]!;
    const isThread = list.length > 1 || first.type === 'DiscussionNote';
    return {
      at: first.created_at,
      item: html`<li class="thread${isThread ? ' discussion' : ''}"><ul class="notes">${list.map(noteItem)}</ul>${
        canComment && !first.system ? replyForm(first) : ''}</li>`,
    };
  });
  // The label, milestone and state changes in their place among the threads (issue-activity.ts).
  const eventItems = events.map((e) => ({
    at: e.at,
    item: html`<li class="thread"><ul class="notes"><li class="note system-note" id="${e.anchor}">
<div class="note-head">${personLink(e.userId === null ? undefined : authorById.get(e.userId))} <a class="muted" href="#${e.anchor}">${timeTag(e.at)}</a></div>
<div class="note-body"><p>${e.text}</p></div></li></ul></li>`,
  }));
  const discussion = [...threadItems, ...eventItems].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).map((x) => x.item);

  const labels = labelDetails(i.labels);
  const list = issuesPath(p.project.fullPath);
  const details = html`<dl class="issue-details">
<dt>Assignees</dt><dd>${i.assignees.length > 0 ? i.assignees.map((a, n) => html`${n > 0 ? ', ' : ''}${personLink(a)}`) : 'None'}</dd>
<dt>Labels</dt><dd>${labels.length > 0 ? labels.map((l) => labelChip(l, `${list}?${new URLSearchParams({ 'label_name[]': l.name })}`)) : 'None'}</dd>
<dt>Milestone</dt><dd>${i.milestone ? html`<a href="${localPath(i.milestone.web_url)}">${i.milestone.title}</a>` : 'None'}</dd>
<dt>Due date</dt><dd>${i.due_date ? html`<time datetime="${i.due_date}">${i.due_date}</time>` : 'None'}</dd>
</dl>`;
  const stateForm = canUpdate ? html`<form class="inline" method="post" action="${self}/${issue.state === 'closed' ? 'reopen' : 'close'}">${csrf(p)}<button type="submit">${
    issue.state === 'closed' ? 'Reopen issue' : 'Close issue'}</button></form>` : '';
  let commentArea: SafeHtml;
  if (canComment) {
    commentArea = html`<form method="post" action="${self}/notes" class="comment-form">${csrf(p)}
<label for="note-body">Comment</label><textarea id="note-body" name="note" rows="5" maxlength="${NOTE_MAX_LENGTH}" required>${o.draft ?? ''}</textarea>
${canReadInternalNotes(actor) ? html`<label class="check"><input type="checkbox" name="internal" value="true"> Make this an internal note</label>` : ''}
<button type="submit" class="primary">Comment</button></form>`;
  } else if (!p.signedIn) {
    commentArea = html`<p class="muted">Please <a href="/users/sign_in">sign in</a> to comment.</p>`;
  } else if (readsNotes && issue.discussion_locked) {
    commentArea = html`<p class="muted">The discussion is locked: only project members may comment.</p>`;
  } else {
    commentArea = html``;
  }

  return p.render({
    title: `${issue.title} (#${issue.iid})`, active: 'issues', heading: false,
    breadcrumbs: [
      { text: p.project.project.name, href: `/${p.project.fullPath.split('/').map(encodeURIComponent).join('/')}` },
      { text: 'Issues', href: list }, { text: `#${issue.iid}` },
    ],
    body: html`${o.errors?.length ? html`<div class="alert" role="alert"><ul>${o.errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<div class="issue-header">${issueState(issue.state)}${issue.confidential ? html` <span class="badge confidential">Confidential</span>` : ''}${
  issue.discussion_locked ? html` <span class="badge">Locked</span>` : ''}
<span class="muted">Opened ${timeTag(issue.created_at)} by ${personLink(i.author)}${
  issue.state === 'closed' && i.closed_by ? html` · closed by ${personLink(i.closed_by)}` : ''}</span>${stateForm}</div>
<h1 class="issue-title">${issue.title}</h1>
<div class="issue-layout"><div class="issue-main">
<div class="panel markdown issue-description">${description ?? html`<p class="muted">No description.</p>`}</div>
${awardCounts(awards.map((a) => a.name))}
<h2>Activity</h2>
${discussion.length > 0 ? html`<ul class="discussion">${discussion}</ul>` : html`<p class="muted">No comments yet.</p>`}
${notes.length > MAX_NOTES ? html`<p class="muted">Only the first ${MAX_NOTES} notes are shown.</p>` : ''}
${commentArea}
</div><aside class="issue-sidebar panel" aria-label="Issue details">${details}</aside></div>`,
  });
}

/** Whether `user` may read the issue (and its internal notes when `internal`): whom a mention reaches. */
function readerCheck(p: ProjectPageRequest, subject: IssueSubject, internal: boolean) {
  return async (user: UserRow) => {
    const actor = await projectActor(p.ctx.db, user, p.project.project.id, p.project.lineage);
    return canReadIssue(actor, p.project.project, subject) && canOnProject(actor, 'read_note', p.project.project)
      && (!internal || canReadInternalNotes(actor));
  };
}

/** POST …/-/issues/<iid>/notes: a comment, or with `discussion_id` a reply (discussions.ts's rules). */
export async function commentOnIssue(p: ProjectPageRequest, markdown: MarkdownRenderer) {
  const { issue, subject, ref } = await loadIssuePage(p);
  const { actor, project } = p.project;
  if (!canOnProject(actor, 'read_note', project)) throw pageError(404);
  if (!canCommentOnIssue(actor, project, subject)) throw pageError(403);
  const form = (p.request.body ?? {}) as Form;
  const body = formText(form, 'note', NOTE_MAX_LENGTH * 2);
  if (body === undefined) {
    return sendPage(p.reply, 400, await showIssuePage(p, markdown, { errors: ['Note is too long or not text'] }));
  }
  // A thread id is 40 hex characters (discussions.ts bounds it at 255); anything else names no thread.
  const discussionId = formText(form, 'discussion_id', 255);
  if (form.discussion_id !== undefined && discussionId === undefined) throw pageError(404);
  const scope = { includeInternal: canReadInternalNotes(actor) };
  let internal = form.internal === 'true' && scope.includeInternal;
  let replyTo: string | undefined;
  if (discussionId !== undefined && discussionId !== '') {
    const [first] = await discussionNotes(p.ctx.db, ref, [discussionId], scope);
    if (!first) throw pageError(404);
    // A system note's thread takes no reply (IndividualNoteDiscussion#can_convert_to_discussion?).
    if (first.system) {
      return sendPage(p.reply, 400, await showIssuePage(p, markdown, { errors: ['Discussion can not be replied to.'] }));
    }
    // A reply to an internal thread is internal too (Notes::BuildService).
    internal = first.internal === 1;
    replyTo = discussionId;
  }
  const user = p.session!.user;
  const mentions = await mentionTodos(p.ctx.db, body, user.id, readerCheck(p, subject, internal));
  const result = await createNote(p.ctx.db, {
    noteable: ref, authorId: user.id, body, internal, mentions, type: replyTo ? 'DiscussionNote' : null, replyTo,
  });
  if (!result.ok) {
    const errors = Object.entries(result.errors).flatMap(([k, m]) => m.map((x) => `${k[0]!.toUpperCase()}${k.slice(1)} ${x}`));
    return sendPage(p.reply, 400, await showIssuePage(p, markdown, { errors, draft: body }));
  }
  return redirect(p.reply, 'POST', `${issuePath(p.project.fullPath, issue.iid)}#note_${result.value.id}`);
}

/** POST …/-/issues/<iid>/close and /reopen: PUT …/issues/:iid with state_event, as its author, assignees and Reporters may. */
export async function changeIssueState(p: ProjectPageRequest, event: 'close' | 'reopen') {
  const { issue, subject } = await loadIssuePage(p);
  const { actor, project, lineage } = p.project;
  if (!canUpdateIssue(actor, project, subject)) throw pageError(403);
  await updateIssue(p.ctx.db, {
    where: { project, lineage }, issue, user: p.session!.user, actor, params: { stateEvent: event },
  });
  return redirect(p.reply, 'POST', issuePath(p.project.fullPath, issue.iid));
}
