/**
 * Pieces the merge request pages share (issue 33): a request's address, its state and merge
 * status in words, people and labels as links and badges, and one row of a list — drawn from
 * the API's MergeRequest entity (http/entities/merge-request.ts), so that a page says what the
 * API answers.
 */
import type { MergeRequestEntity } from '../../../http/entities/merge-request.ts';
import { html, type SafeHtml } from '../../html.ts';
import { enc, statusBadge, timeTag } from '../../ci-view.ts';

export const requestPath = (projectPath: string, iid: number) => `/${enc(projectPath)}/-/merge_requests/${iid}`;

/**
 * detailed_merge_status in words (MergeRequests::Mergeability::DetailedMergeStatusService of
 * the Service 15.2, as the merge widget says each one).
 */
const MERGE_STATUS_WORDS: Record<string, string> = {
  mergeable: 'Ready to merge.',
  checking: 'Checking whether the branches merge…',
  not_open: 'The merge request is not open.',
  draft_status: 'The merge request is a draft: mark it as ready before merging.',
  discussions_not_resolved: 'Every thread must be resolved before merging.',
  broken_status: 'The branches have merge conflicts: resolve them before merging.',
  need_rebase: 'The source branch must be rebased onto the target branch (fast-forward merges only).',
  ci_must_pass: 'A successful pipeline is required before merging.',
  ci_still_running: 'The pipeline is still running: merging waits for it to succeed.',
};

export function mergeStatusWords(status: string): string {
  return MERGE_STATUS_WORDS[status] ?? status.replace(/_/g, ' ');
}

const STATE_WORDS: Record<string, string> = { opened: 'Open', merged: 'Merged', closed: 'Closed', locked: 'Locked' };

export function stateBadge(state: string): SafeHtml {
  return html`<span class="badge mr-state mr-state-${/^[a-z]+$/.test(state) ? state : 'unknown'}">${STATE_WORDS[state] ?? state}</span>`;
}

export interface Person { username: string; name: string }

export function personLink(u: Person | null | undefined): SafeHtml | string {
  return u ? html`<a href="/${enc(u.username)}">${u.name}</a>` : '';
}

export function peopleLinks(list: Person[], none = 'None'): SafeHtml {
  return list.length === 0 ? html`<span class="muted">${none}</span>` : html`${list.map((u, i) => html`${i > 0 ? ', ' : ''}${personLink(u)}`)}`;
}

export function labelBadges(labels: string[]): SafeHtml {
  return html`${labels.map((l) => html`<span class="badge label">${l}</span> `)}`;
}

/** A request's head pipeline as a status badge, linked to the pipeline for those who may read it. */
export function pipelineIcon(
  projectPath: string, pipeline: { id: number; status: string } | null | undefined, canRead: boolean,
): SafeHtml | string {
  if (!pipeline || !canRead) return '';
  return html`<a class="mr-pipeline" href="/${enc(projectPath)}/-/pipelines/${pipeline.id}" aria-label="Pipeline ${pipeline.status}">${statusBadge(pipeline.status)}</a>`;
}

/** One request of a list: reference, title, draft marker, labels, who and when, branch, pipeline. */
export function requestRow(mr: MergeRequestEntity, projectPath: string, o: { reference: string; canReadPipeline: boolean }): SafeHtml {
  return html`<li class="mr-row" data-iid="${mr.iid}">
<div><a class="item-title" href="${requestPath(projectPath, mr.iid)}">${mr.title}</a>${mr.draft ? html` <span class="badge draft">Draft</span>` : ''}
${labelBadges(mr.labels as string[])}${pipelineIcon(projectPath, mr.head_pipeline, o.canReadPipeline)}</div>
<div class="muted">${o.reference} · opened ${timeTag(mr.created_at)} by ${personLink(mr.author)}${mr.state !== 'opened' ? html` · ${stateBadge(mr.state)}` : ''}
· into <code>${mr.target_branch}</code>${mr.milestone ? html` · milestone ${mr.milestone.title}` : ''}${
  mr.assignees.length > 0 ? html` · assigned to ${peopleLinks(mr.assignees)}` : ''}${mr.user_notes_count > 0 ? html` · ${mr.user_notes_count} comment${mr.user_notes_count === 1 ? '' : 's'}` : ''}</div>
</li>`;
}
