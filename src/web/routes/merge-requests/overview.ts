/**
 * A merge request's Overview (issue 33): its description rendered by the API's sanitising
 * Markdown renderer, its branches, author, assignees, reviewers, labels and milestone, the merge
 * status in words (the API's detailed_merge_status), its head pipeline, its approvals and its
 * discussion — comments, system notes, threads with their resolved state and line comments with
 * their file and line. The forms of the page (comment, reply, resolve, approve, close, reopen,
 * merge, merge when pipeline succeeds and its cancel) are shown to those the API would let do the
 * same (actions.ts does it through the API's own domain functions).
 */
import type { NoteRow } from '../../../db/tables/notes.ts';
import { discussionIdsQuery, discussionNotes } from '../../../domain/notes/notes.queries.ts';
import { peopleOf } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { canUpdateMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { AUTO_MERGE_WAITS_FOR } from '../../../domain/merge-requests/accept.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { mergeRequestNoteable } from '../../../http/loaders/noteables.ts';
import { referenceResolverFor } from '../../../http/markdown-references.ts';
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD } from '../../layout.ts';
import type { ProjectPageRequest } from '../../router.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { enc, timeTag } from '../../ci-view.ts';
import { pageMarkdown } from '../../components/markdown.ts';
import { labelBadges, mergeStatusWords, peopleLinks, personLink, pipelineIcon, type Person } from './mr-view.ts';
import { renderRequest, type RequestPage } from './request-page.ts';

/** Threads on one page of the discussion; a longer discussion pages on. */
const THREADS_PER_PAGE = 100;

export interface OverviewOptions {
  /** What a refused form said (shown above the page, with the form's status). */
  errors?: string[];
  /** The comment as it was typed, kept when the form was refused. */
  draft?: string;
}

export function csrfInput(p: ProjectPageRequest): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">`;
}

function actionForm(
  p: ProjectPageRequest, r: RequestPage, action: string, label: string, o: { primary?: boolean; fields?: SafeHtml } = {},
): SafeHtml {
  return html`<form class="inline" method="post" action="${r.path}/${action}">${csrfInput(p)}${o.fields ?? ''}<button type="submit"${o.primary ? html` class="primary"` : ''}>${label}</button></form>`;
}

interface Position { old_path?: string | null; new_path?: string | null; old_line?: number | null; new_line?: number | null }

function positionOf(note: NoteRow): Position | null {
  if (!note.position) return null;
  try {
    const v = JSON.parse(note.position) as unknown;
    return v && typeof v === 'object' ? v as Position : null;
  } catch {
    return null;
  }
}

async function renderer(p: ProjectPageRequest, markdown: MarkdownRenderer) {
  const resolveReferences = referenceResolverFor(p.ctx.db, {
    externalUrl: p.ctx.config.externalUrl, viewer: p.session?.user ?? null, project: p.project,
  });
  const ownHost = new URL(p.ctx.config.externalUrl).host;
  // The renderer's output is sanitised HTML (domain/markdown/sanitize.ts), as the API's
  // description_html and POST /markdown answer it: the one markup a page inserts as it is.
  return async (text: string) => pageMarkdown(await markdown.render(text, { gfm: true, resolveReferences, ownHost }));
}

async function discussion(p: ProjectPageRequest, r: RequestPage, render: (text: string) => Promise<SafeHtml>, o: OverviewOptions) {
  const { db, config } = p.ctx;
  const nc = mergeRequestNoteable(db, config.storages, p.project, r.mr, r.subject);
  if (!nc) return html``;
  const page = pageNumber(p.request);
  const ids = (await discussionIdsQuery(db, nc.noteable, nc.scope).limit(THREADS_PER_PAGE + 1)
    .offset((page - 1) * THREADS_PER_PAGE).execute()).map((row) => row.discussion_id);
  const shownIds = ids.slice(0, THREADS_PER_PAGE);
  const notes = await discussionNotes(db, nc.noteable, shownIds, nc.scope);
  const personIds = new Set(notes.flatMap((n) => [n.author_id, ...(n.resolved_by_id === null ? [] : [n.resolved_by_id])]));
  const people = new Map((await findUserBasicsByIds(db, [...personIds])).map((u) => [u.id, u as Person]));
  const byThread = new Map<string, NoteRow[]>();
  for (const n of notes) byThread.set(n.discussion_id, [...(byThread.get(n.discussion_id) ?? []), n]);
  const signedIn = p.signedIn !== null;

  const noteBody = async (n: NoteRow) => html`<article class="note${n.system ? ' system-note' : ''}" id="note_${n.id}">
<div class="note-meta">${personLink(people.get(n.author_id))} <span class="muted">@${people.get(n.author_id)?.username ?? ''}</span> · ${timeTag(n.created_at)}${
  n.last_edited_at ? html` <span class="muted">(edited)</span>` : ''}</div>
<div class="markdown">${await render(n.note)}</div>
</article>`;

  const threads: SafeHtml[] = [];
  for (const id of shownIds) {
    const list = byThread.get(id);
    if (!list || list.length === 0) continue;
    const first = list[0]!;
    if (first.system) {
      threads.push(html`<li class="thread system" id="discussion_${id}"><div class="note-meta">${personLink(people.get(first.author_id))} <span class="system-text">${first.note}</span> · ${timeTag(first.created_at)}</div></li>`);
      continue;
    }
    const resolvable = list.some((n) => n.resolvable === 1);
    const resolved = resolvable && list.every((n) => n.resolvable !== 1 || n.resolved_at !== null);
    const resolver = resolved ? people.get(list.find((n) => n.resolved_by_id !== null)?.resolved_by_id ?? 0) : undefined;
    const pos = first.type === 'DiffNote' || first.type === 'LegacyDiffNote' ? positionOf(first) : null;
    const where = pos ? html`<p class="diff-position">Comment on <a href="${r.path}/diffs"><code>${pos.new_path ?? pos.old_path ?? ''}</code></a>${
      pos.new_line ? html` line ${pos.new_line}` : pos.old_line ? html` line ${pos.old_line} (old)` : ''}</p>` : '';
    const bodies: SafeHtml[] = [];
    for (const n of list) bodies.push(await noteBody(n));
    const canReply = signedIn && nc.canComment;
    const resolveForm = resolvable && signedIn && nc.canResolve
      ? actionForm(p, r, 'resolve', resolved ? 'Unresolve thread' : 'Resolve thread', {
        fields: html`<input type="hidden" name="discussion_id" value="${id}"><input type="hidden" name="resolved" value="${resolved ? 'false' : 'true'}">`,
      }) : '';
    threads.push(html`<li class="thread${resolvable ? ' resolvable' : ''}${resolved ? ' resolved' : ''}" id="discussion_${id}">
${where}${bodies}
${resolvable ? html`<p class="thread-state">${resolved ? html`Resolved${resolver ? html` by ${personLink(resolver)}` : ''}` : 'Unresolved thread'}</p>` : ''}
${canReply ? html`<form method="post" action="${r.path}/reply" class="reply-form">${csrfInput(p)}<input type="hidden" name="discussion_id" value="${id}">
<label for="reply-${id}">Reply</label><textarea id="reply-${id}" name="note" rows="2" required></textarea>
<button type="submit">Reply</button></form>` : ''}
${resolveForm}
</li>`);
  }

  const commentForm = !signedIn
    ? html`<p class="muted"><a href="/users/sign_in?return_to=${encodeURIComponent(r.path)}">Sign in</a> to comment.</p>`
    : nc.canComment ? html`<form method="post" action="${r.path}/notes" id="comment-form">${csrfInput(p)}
<label for="note-body">Comment</label><textarea id="note-body" name="note" rows="4" required>${o.draft ?? ''}</textarea>
<label class="check"><input type="checkbox" name="thread" value="true"> Start a thread (others can resolve it)</label>
<button type="submit" class="primary">Comment</button></form>`
      : html`<p class="muted">The discussion is locked: only project members can comment.</p>`;
  return html`<section aria-labelledby="activity-heading" id="notes"><h2 id="activity-heading">Activity</h2>
${threads.length === 0 ? html`<p class="muted">No comments yet.</p>` : html`<ul class="threads">${threads}</ul>`}
${pagination(r.path, page, ids.length > THREADS_PER_PAGE)}
${commentForm}</section>`;
}

async function mergeWidget(p: ProjectPageRequest, r: RequestPage): Promise<SafeHtml> {
  const { db } = p.ctx;
  const e = r.entity;
  const viewerId = p.session?.user.id ?? null;
  const canUpdate = viewerId !== null && canUpdateMergeRequest(p.project.actor, p.project.project, r.subject);
  const approverIds = (await peopleOf(db, 'approvals', [r.mr.id])).get(r.mr.id) ?? [];
  const approvers = await findUserBasicsByIds(db, approverIds);
  const hasApproved = viewerId !== null && approverIds.includes(viewerId);
  // GET …/approvals user_can_approve: whoever may update an open request and has not approved it.
  const canApprove = canUpdate && !hasApproved && e.state === 'opened';
  const pipeline = pipelineIcon(p.project.fullPath, e.head_pipeline, p.project.can('read_build'));
  const open = e.state === 'opened' || e.state === 'locked';
  const parts: SafeHtml[] = [];
  if (pipeline) parts.push(html`<p id="mr-pipeline">Pipeline ${pipeline}</p>`);
  parts.push(html`<p id="approvals">${approvers.length > 0 ? html`Approved by ${peopleLinks(approvers)}` : 'No approvals yet.'}
${canApprove ? actionForm(p, r, 'approve', 'Approve', { fields: html`<input type="hidden" name="sha" value="${e.sha ?? ''}">` }) : ''}${
  hasApproved ? actionForm(p, r, 'unapprove', 'Revoke approval') : ''}</p>`);
  if (e.state === 'merged') {
    parts.push(html`<p id="merge-status">Merged${e.merged_by ? html` by ${personLink(e.merged_by)}` : ''} ${timeTag(e.merged_at)}${
      e.merge_commit_sha ? html` as <a href="/${enc(p.project.fullPath)}/-/commit/${e.merge_commit_sha}"><code>${e.merge_commit_sha.slice(0, 8)}</code></a>` : ''}</p>`);
  } else {
    parts.push(html`<p id="merge-status" data-status="${e.detailed_merge_status}">${mergeStatusWords(e.detailed_merge_status)}</p>`);
  }
  if (e.merge_error) parts.push(html`<p class="alert" role="alert">${e.merge_error}</p>`);
  // Merge when pipeline succeeds: offered while the head pipeline is on its way, as the API's PUT
  // …/merge waits only then (the Service's merge widget: "Merge when pipeline succeeds").
  const waiting = e.head_pipeline !== null && e.head_pipeline !== undefined && AUTO_MERGE_WAITS_FOR.includes(e.head_pipeline.status);
  if (open && e.merge_when_pipeline_succeeds) {
    // can_cancel_auto_merge?: whoever may update the request, or who set it.
    const canCancel = canUpdate || (viewerId !== null && r.mr.merge_user_id === viewerId);
    parts.push(html`<p id="auto-merge">Set by ${personLink(e.merge_user)} to be merged automatically when the pipeline succeeds
${canCancel ? actionForm(p, r, 'cancel_auto_merge', 'Cancel auto-merge') : ''}</p>`);
  } else if (open && e.user.can_merge && p.signedIn && e.sha
    && (e.detailed_merge_status === 'mergeable' || (waiting && e.detailed_merge_status === 'ci_still_running'))) {
    // The sha the page shows: a push after it was loaded makes the merge refuse (the API's `sha` guard).
    const now = e.detailed_merge_status === 'mergeable'
      ? html`<button type="submit"${waiting ? '' : html` class="primary"`}>${waiting ? 'Merge immediately' : 'Merge'}</button>` : '';
    parts.push(html`<form method="post" action="${r.path}/merge" id="merge-form">${csrfInput(p)}<input type="hidden" name="sha" value="${e.sha}">
<label class="check"><input type="checkbox" name="should_remove_source_branch" value="true"${e.force_remove_source_branch ? html` checked` : ''}> Delete source branch</label>
<label class="check"><input type="checkbox" name="squash" value="true"${e.squash ? html` checked` : ''}> Squash commits</label>
${waiting ? html`<button type="submit" class="primary" name="merge_when_pipeline_succeeds" value="true">Merge when pipeline succeeds</button> ` : ''}${now}</form>`);
  }
  const stateButtons = canUpdate && e.state !== 'merged'
    ? html`<div class="actions">${e.state === 'closed' ? actionForm(p, r, 'reopen', 'Reopen merge request') : actionForm(p, r, 'close', 'Close merge request')}</div>` : '';
  return html`<section class="panel mr-widget" aria-label="Merge">${parts}${stateButtons}</section>`;
}

export async function overviewPage(
  p: ProjectPageRequest, r: RequestPage, markdown: MarkdownRenderer, o: OverviewOptions = {},
): Promise<SafeHtml> {
  const e = r.entity;
  const render = await renderer(p, markdown);
  const description = e.description && e.description.trim() !== ''
    ? html`<div class="markdown" id="description">${await render(e.description)}</div>` : html`<p class="muted" id="description">No description.</p>`;
  const details = html`<aside class="panel mr-details" aria-label="Details"><dl>
<dt>Assignees</dt><dd id="assignees">${peopleLinks(e.assignees)}</dd>
<dt>Reviewers</dt><dd id="reviewers">${peopleLinks(e.reviewers)}</dd>
<dt>Labels</dt><dd id="labels">${e.labels.length > 0 ? labelBadges(e.labels as string[]) : html`<span class="muted">None</span>`}</dd>
<dt>Milestone</dt><dd id="milestone">${e.milestone ? e.milestone.title : html`<span class="muted">None</span>`}</dd>
</dl></aside>`;
  const errors = o.errors && o.errors.length > 0
    ? html`<div class="alert" role="alert"><ul>${o.errors.map((m) => html`<li>${m}</li>`)}</ul></div>` : '';
  return renderRequest(p, r, 'overview', html`${errors}<div class="mr-overview">
<div class="mr-main"><section class="panel" aria-label="Description">${description}</section>
${await mergeWidget(p, r)}
${await discussion(p, r, render, o)}</div>
${details}</div>`);
}
