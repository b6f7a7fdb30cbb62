/**
 * What the project and group milestone pages share (issue 33): a list of milestones with their
 * state and dates, and one milestone's page with its description (the API's Markdown renderer)
 * and the issues of it the viewer may see — the finder behind GET …/milestones/:id/issues
 * (http/routes/issues/issue-lists.ts), so confidential issues show as the API shows them.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../../db/types.ts';
import type { MilestoneRow } from '../../../db/tables/labels.ts';
import {
  countIssuesByState, filterIssues, inMilestone, issuesQuery, issuesShape, type IssueContainer,
} from '../../../domain/issues/issues.finder.ts';
import { orderIssues } from '../../../domain/issues/issue-orders.ts';
import { issueProjectPaths } from '../../../http/entities/issue.ts';
import { todayDate } from '../../../domain/clock.ts';
import { html, type SafeHtml } from '../../html.ts';
import { issuePath, timeTag } from '../../issue-view.ts';

export const MILESTONE_STATES = ['opened', 'closed', 'all'] as const;
export type MilestoneListState = (typeof MILESTONE_STATES)[number];
/** Issues listed on a milestone's page, per state. */
const MILESTONE_ISSUES = 100;

export function milestoneListState(query: Record<string, unknown>): MilestoneListState {
  return MILESTONE_STATES.find((s) => s === query.state) ?? 'opened';
}

/** The milestones query's state for a tab (`active`/`closed` in the table, open/closed on the page). */
export const stateFilter = (s: MilestoneListState) => (s === 'opened' ? 'active' as const : s === 'closed' ? 'closed' as const : undefined);

/** Milestone#expired?: a due date before today (a milestone due today is not yet expired). */
const expired = (m: MilestoneRow) => m.due_date !== null && m.due_date < todayDate();

function dates(m: MilestoneRow): SafeHtml {
  return html`${m.start_date ? html`starts <time datetime="${m.start_date}">${m.start_date}</time>` : ''}${
    m.start_date && m.due_date ? ' · ' : ''}${m.due_date ? html`due <time datetime="${m.due_date}">${m.due_date}</time>` : ''}${
    expired(m) && m.state === 'active' ? html` <span class="badge">Expired</span>` : ''}`;
}

export function milestoneStateBadge(m: MilestoneRow): SafeHtml {
  return m.state === 'closed' ? html`<span class="issue-state state-closed">Closed</span>` : html`<span class="issue-state state-opened">Open</span>`;
}

/** Tabs and rows of milestones; `hrefOf` gives each milestone's page (its owner's, project or group). */
export function milestoneListBody(
  base: string, state: MilestoneListState, rows: MilestoneRow[], hrefOf: (m: MilestoneRow) => string, ownerOf: (m: MilestoneRow) => string,
): SafeHtml {
  const tab = (s: MilestoneListState, label: string) =>
    html`<a href="${s === 'opened' ? base : `${base}?state=${s}`}"${s === state ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<nav class="tabs" aria-label="Milestone states">${tab('opened', 'Open')}${tab('closed', 'Closed')}${tab('all', 'All')}</nav>
${rows.length === 0 ? html`<p class="muted" id="no-milestones">No milestones to show.</p>` : html`<ul class="list milestones">${rows.map((m) => html`<li id="milestone-${m.id}">
${milestoneStateBadge(m)} <a class="item-title" href="${hrefOf(m)}">${m.title}</a> <span class="muted">${ownerOf(m)}</span>
<div class="muted">${dates(m)}</div></li>`)}</ul>`}`;
}

/** The issues of the milestone the viewer may see in the container, open and closed, with their counts. */
export async function milestoneIssues(db: Kysely<DB>, viewer: UserRow | null, container: IssueContainer, milestone: MilestoneRow) {
  const shape = async () => inMilestone(await issuesShape(db, viewer, container, false, { inline: true }), milestone.id);
  const counts = await countIssuesByState(db, issuesQuery(db, await shape()));
  const of = async (state: 'opened' | 'closed') => {
    const s = orderIssues(filterIssues(await shape(), { state }, viewer), 'relative_position', 'asc');
    return issuesQuery(db, s).limit(MILESTONE_ISSUES).execute();
  };
  const [opened, closed] = await Promise.all([of('opened'), of('closed')]);
  const paths = await issueProjectPaths(db, [...opened, ...closed].map((i) => i.project_id));
  return { counts, opened, closed, paths };
}

export function milestonePageBody(
  m: MilestoneRow, description: SafeHtml | null, issues: Awaited<ReturnType<typeof milestoneIssues>>, showReference: boolean,
): SafeHtml {
  const total = issues.counts.opened + issues.counts.closed;
  const percent = total === 0 ? 0 : Math.round((issues.counts.closed / total) * 100);
  const list = (rows: typeof issues.opened, label: string, id: string) => html`<section aria-labelledby="${id}"><h2 id="${id}">${label}</h2>${
    rows.length === 0 ? html`<p class="muted">None.</p>` : html`<ul class="list issues">${rows.map((i) => {
      const path = issues.paths.get(i.project_id)?.fullPath ?? '';
      return html`<li><a href="${issuePath(path, i.iid)}">${i.title}</a> <span class="muted">${showReference ? `${path}#${i.iid}` : `#${i.iid}`}</span>${
        i.confidential ? html` <span class="badge confidential">Confidential</span>` : ''}</li>`;
    })}</ul>`}</section>`;
  return html`<div class="issue-header">${milestoneStateBadge(m)} <span class="muted">${dates(m)}</span></div>
<div class="panel markdown">${description ?? html`<p class="muted">No description.</p>`}</div>
<p><meter min="0" max="100" value="${percent}" aria-label="Issues closed">${percent}%</meter> ${percent}% complete ·
${issues.counts.opened} open · ${issues.counts.closed} closed · created ${timeTag(m.created_at)}</p>
<div class="milestone-issues">${list(issues.opened, `Open issues (${issues.counts.opened})`, 'open-issues')}${
  list(issues.closed, `Closed issues (${issues.counts.closed})`, 'closed-issues')}</div>`;
}
