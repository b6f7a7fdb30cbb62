/**
 * The issue lists of a project (`/<project>/-/issues`) and of a group (`/groups/<group>/-/issues`):
 * state tabs with their counts, search, the label, milestone, author and assignee filters and the
 * sorts of the Service's list (its `label_name[]`, `milestone_title`, `author_username`,
 * `assignee_username` and `sort` parameters), a page at a time. The rows and the counts come from
 * the finder behind GET /projects/:id/issues and GET /groups/:id/issues (domain/issues/issues.finder.ts),
 * so confidential issues show exactly to those the API shows them to (issue 29).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../../db/types.ts';
import {
  countIssuesByState, filterIssues, issuesQuery, issuesShape, type IssueContainer, type IssueFilters,
} from '../../../domain/issues/issues.finder.ts';
import { orderIssues, type IssueOrder } from '../../../domain/issues/issue-orders.ts';
import { issueProjectPaths, presentIssues, type Issue, type ReferenceContext } from '../../../http/entities/issue.ts';
import { html, type SafeHtml } from '../../html.ts';
import {
  issuePath, labelChip, labelDetails, localPath, personLink, queryValue, queryValues, timeTag,
} from '../../issue-view.ts';

export const PER_PAGE = 20;
/** Deeper pages are not offered: an OFFSET that far reads more rows than anyone pages through. */
const MAX_PAGE = 500;

const STATES = ['opened', 'closed', 'all'] as const;
type State = (typeof STATES)[number];

/**
 * The sort names of the Service's issue list address (its list's urlSortParams: `created_date`,
 * `milestone`, `due_date`, `popularity` … ) and the API order each stands for.
 */
const SORTS: Record<string, { label: string; order: IssueOrder; dir: 'asc' | 'desc' }> = {
  created_date: { label: 'Created date', order: 'created_at', dir: 'desc' },
  created_asc: { label: 'Oldest created', order: 'created_at', dir: 'asc' },
  updated_desc: { label: 'Last updated', order: 'updated_at', dir: 'desc' },
  updated_asc: { label: 'Oldest updated', order: 'updated_at', dir: 'asc' },
  priority: { label: 'Priority', order: 'priority', dir: 'asc' },
  label_priority: { label: 'Label priority', order: 'label_priority', dir: 'asc' },
  milestone: { label: 'Milestone due date', order: 'milestone_due', dir: 'asc' },
  milestone_due_desc: { label: 'Milestone due later', order: 'milestone_due', dir: 'desc' },
  due_date: { label: 'Due date', order: 'due_date', dir: 'asc' },
  due_date_desc: { label: 'Due later', order: 'due_date', dir: 'desc' },
  popularity: { label: 'Popularity', order: 'popularity', dir: 'desc' },
  popularity_asc: { label: 'Least popular', order: 'popularity', dir: 'asc' },
  title_asc: { label: 'Title', order: 'title', dir: 'asc' },
  title_desc: { label: 'Title, descending', order: 'title', dir: 'desc' },
  relative_position: { label: 'Manual', order: 'relative_position', dir: 'asc' },
};

/** The sort names the Service's helpers also write (sort_value_*), read as the list's own. */
const SORT_ALIASES: Record<string, string> = {
  created_desc: 'created_date', milestone_due_asc: 'milestone', due_date_asc: 'due_date', popularity_desc: 'popularity',
};

/** What the address asks of the list: bounded values, anything else falls back to the defaults. */
export interface ListQuery {
  state: State;
  search: string;
  labels: string[];
  milestone: string;
  author: string;
  assignee: string;
  sort: string;
  page: number;
}

export function readListQuery(query: Record<string, unknown>): ListQuery {
  const state = STATES.find((s) => s === query.state) ?? 'opened';
  const asked = typeof query.sort === 'string' ? (Object.hasOwn(SORT_ALIASES, query.sort) ? SORT_ALIASES[query.sort]! : query.sort) : '';
  const sort = Object.hasOwn(SORTS, asked) ? asked : 'created_date';
  const rawPage = queryValue(query, 'page', 6);
  const page = /^\d{1,6}$/.test(rawPage) ? Math.min(Math.max(Number(rawPage), 1), MAX_PAGE) : 1;
  return {
    state, sort, page,
    search: queryValue(query, 'search'),
    labels: queryValues(query, 'label_name'),
    milestone: queryValue(query, 'milestone_title'),
    author: queryValue(query, 'author_username'),
    assignee: queryValue(query, 'assignee_username'),
  };
}

/** The list's address with these values (defaults left out, so the plain address is the default list). */
export function listUrl(base: string, q: ListQuery, change: Partial<ListQuery> = {}): string {
  const v = { ...q, ...change };
  const params = new URLSearchParams();
  if (v.state !== 'opened') params.set('state', v.state);
  if (v.search) params.set('search', v.search);
  for (const l of v.labels) params.append('label_name[]', l);
  if (v.milestone) params.set('milestone_title', v.milestone);
  if (v.author) params.set('author_username', v.author);
  if (v.assignee) params.set('assignee_username', v.assignee);
  if (v.sort !== 'created_date') params.set('sort', v.sort);
  if (v.page > 1) params.set('page', String(v.page));
  const s = params.toString();
  return s ? `${base}?${s}` : base;
}

/** `None` and `Any` as the Service's filters read them (any case); anything else a value. */
function special(value: string): 'none' | 'any' | null {
  const lower = value.toLowerCase();
  return lower === 'none' ? 'none' : lower === 'any' ? 'any' : null;
}

function filtersOf(q: ListQuery): IssueFilters {
  const f: IssueFilters = { scope: 'all', state: 'all' };
  if (q.search) f.search = q.search;
  if (q.labels.length === 1 && ['none', 'no label'].includes(q.labels[0]!.toLowerCase())) f.labels = { none: true };
  else if (q.labels.length === 1 && q.labels[0]!.toLowerCase() === 'any') f.labels = { any: true };
  else if (q.labels.length > 0) f.labels = { value: q.labels };
  if (q.milestone) {
    const s = special(q.milestone);
    const lower = q.milestone.toLowerCase();
    f.milestone = s === 'none' ? { none: true } : s === 'any' ? { any: true }
      : lower === 'upcoming' || q.milestone === '#upcoming' ? { upcoming: true }
        : lower === 'started' || q.milestone === '#started' ? { started: true } : { value: q.milestone };
  }
  if (q.author) f.authorUsername = q.author;
  if (q.assignee) {
    const s = special(q.assignee);
    if (s === 'none') f.assignee = { none: true };
    else if (s === 'any') f.assignee = { any: true };
    else f.assigneeUsernames = [q.assignee];
  }
  return f;
}

export interface ListedIssues {
  issues: Issue[];
  hasNext: boolean;
  counts: { opened: number; closed: number };
  /** Each listed issue's project path, by project id. */
  projectPaths: Map<number, string>;
}

/**
 * One page of the issues the viewer may see in the container, with the opened and closed counts
 * under the same filters (Gitlab::IssuablesCountForState, which the tabs show).
 */
export async function listIssues(
  db: Kysely<DB>, externalUrl: string, viewer: UserRow | null, container: IssueContainer, from: ReferenceContext, q: ListQuery,
): Promise<ListedIssues> {
  const f = filtersOf(q);
  const nonArchived = !('project' in container);
  const counting = filterIssues(await issuesShape(db, viewer, container, nonArchived, { inline: true }), f, viewer);
  const sort = SORTS[q.sort]!;
  const listing = orderIssues(
    filterIssues(await issuesShape(db, viewer, container, nonArchived, { inline: true }), { ...f, state: q.state }, viewer),
    sort.order, sort.dir,
  );
  const [counts, rows] = await Promise.all([
    countIssuesByState(db, issuesQuery(db, counting)),
    issuesQuery(db, listing).limit(PER_PAGE + 1).offset((q.page - 1) * PER_PAGE).execute(),
  ]);
  const page = rows.slice(0, PER_PAGE);
  const projects = await issueProjectPaths(db, page.map((r) => r.project_id));
  const issues = await presentIssues(db, page, {
    externalUrl, projects, viewerId: viewer?.id ?? null, from, withLabelsDetails: true,
  });
  return {
    issues, hasNext: rows.length > PER_PAGE, counts,
    projectPaths: new Map([...projects].map(([id, p]) => [id, p.fullPath])),
  };
}

function issueRow(i: Issue, projectPath: string, listBase: string, q: ListQuery, showReference: boolean): SafeHtml {
  const labels = labelDetails(i.labels);
  return html`<li class="issue-row" id="issue-${i.id}">
<div class="issue-row-title">${i.state === 'closed' ? html`<span class="badge">Closed</span> ` : ''}${
  i.confidential ? html`<span class="badge confidential">Confidential</span> ` : ''}<a class="item-title" href="${issuePath(projectPath, i.iid)}">${i.title}</a>
${labels.map((l) => labelChip(l, listUrl(listBase, q, { labels: [l.name], page: 1 })))}</div>
<div class="muted">${showReference ? `${projectPath}#${i.iid}` : `#${i.iid}`} · opened ${timeTag(i.created_at)} by ${personLink(i.author)}${
  i.milestone ? html` · <a href="${localPath(i.milestone.web_url)}">${i.milestone.title}</a>` : ''}${
  i.due_date ? html` · due <time datetime="${i.due_date}">${i.due_date}</time>` : ''}${
  i.assignees.length > 0 ? html` · assigned to ${i.assignees.map((a, n) => html`${n > 0 ? ', ' : ''}${personLink(a)}`)}` : ''}${
  i.user_notes_count > 0 ? html` · ${i.user_notes_count} ${i.user_notes_count === 1 ? 'comment' : 'comments'}` : ''}${
  i.upvotes > 0 ? html` · ${i.upvotes} 👍` : ''}</div>
</li>`;
}

/** The tabs, filter form, rows and pager of a list whose address is `base`. */
export function issueListBody(
  base: string, q: ListQuery, listed: ListedIssues, o: { showReference: boolean; newIssueHref?: string },
): SafeHtml {
  const all = listed.counts.opened + listed.counts.closed;
  const tab = (state: State, label: string, n: number) =>
    html`<a href="${listUrl(base, q, { state, page: 1 })}"${state === q.state ? html` aria-current="page"` : ''}>${label} <span class="badge">${n}</span></a>`;
  const sortOptions = Object.entries(SORTS).map(([key, s]) => html`<option value="${key}"${key === q.sort ? ' selected' : ''}>${s.label}</option>`);
  const filtered = q.search || q.labels.length > 0 || q.milestone || q.author || q.assignee;
  return html`<nav class="tabs" aria-label="Issue states">${tab('opened', 'Open', listed.counts.opened)}${tab('closed', 'Closed', listed.counts.closed)}${tab('all', 'All', all)}</nav>
${o.newIssueHref ? html`<p><a class="button primary" href="${o.newIssueHref}">New issue</a></p>` : ''}
<form method="get" action="${base}" class="filters issue-filters" role="search">
${q.state !== 'opened' ? html`<input type="hidden" name="state" value="${q.state}">` : ''}
<div><label for="issue-search">Search</label><input type="search" id="issue-search" name="search" value="${q.search}" maxlength="255"></div>
<div><label for="issue-label">Label</label><input type="text" id="issue-label" name="label_name[]" value="${q.labels[0] ?? ''}" maxlength="255"></div>
${q.labels.slice(1).map((l) => html`<input type="hidden" name="label_name[]" value="${l}">`)}
<div><label for="issue-milestone">Milestone</label><input type="text" id="issue-milestone" name="milestone_title" value="${q.milestone}" maxlength="255"></div>
<div><label for="issue-author">Author</label><input type="text" id="issue-author" name="author_username" value="${q.author}" maxlength="255"></div>
<div><label for="issue-assignee">Assignee</label><input type="text" id="issue-assignee" name="assignee_username" value="${q.assignee}" maxlength="255"></div>
<div><label for="issue-sort">Sort</label><select id="issue-sort" name="sort">${sortOptions}</select></div>
<div><button type="submit">Filter</button>${filtered ? html` <a href="${listUrl(base, { ...q, search: '', labels: [], milestone: '', author: '', assignee: '' }, { page: 1 })}">Clear</a>` : ''}</div>
</form>
${listed.issues.length === 0 ? html`<p class="muted" id="no-issues">No issues to show.</p>`
    : html`<ul class="list issues">${listed.issues.map((i) => issueRow(i, listed.projectPaths.get(i.project_id) ?? '', base, q, o.showReference))}</ul>`}
${q.page > 1 || listed.hasNext ? html`<nav class="pagination" aria-label="Pages">${
  q.page > 1 ? html`<a href="${listUrl(base, q, { page: q.page - 1 })}" rel="prev">Previous</a>` : ''}<span>Page ${q.page}</span>${
  listed.hasNext ? html`<a href="${listUrl(base, q, { page: q.page + 1 })}" rel="next">Next</a>` : ''}</nav>` : ''}`;
}
