/**
 * Merge request lists (issue 33): a project's `/-/merge_requests` and a group's (its projects' and
 * its sub-groups'), with the Service's state tabs and their counts, search, the label, milestone,
 * author, assignee, reviewer and target branch filters and the sort orders of its list
 * (MergeRequestsFinder params, as the API's GET …/merge_requests takes them: the same finder, the
 * same visibility). Every value from the address is bounded before it reaches a query.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../../../db/types.ts';
import type { MergeRequestRow } from '../../../db/tables/merge-requests.ts';
import {
  countMergeRequestsByState, filterMergeRequests, orderMergeRequests, visibleMergeRequests,
  type MergeRequestContainer, type MergeRequestFilters, type MergeRequestOrder,
} from '../../../domain/merge-requests/merge-requests.finder.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { descendantGroupIds } from '../../../domain/namespaces/namespaces.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { presentMergeRequests } from '../../../http/entities/merge-request.ts';
import { contextProjectPath, issueProjectPaths } from '../../../http/loaders/issues.ts';
import { findVisibleProject } from '../../../http/loaders/containers.ts';
import type { IssueProjectPath, ReferenceContext } from '../../../http/entities/issue.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame } from '../../layout.ts';
import type { GroupSegmentRequest, ProjectPageRequest, PageRequest } from '../../router.ts';
import { pageNumber, pagination, queryText } from '../../components/lists.ts';
import { enc } from '../../ci-view.ts';
import { requestRow } from './mr-view.ts';

const PER_PAGE = 20;
/** Counts past this are shown as "10000+" (DESIGN: counts are capped, never a full count). */
const COUNT_CAP = 10_000;
const MAX_LABELS = 10;

const TABS = [['opened', 'Open'], ['merged', 'Merged'], ['closed', 'Closed'], ['all', 'All']] as const;
type Tab = (typeof TABS)[number][0];

/** The Service's sort names of the list (sort param) and what they order by. */
const SORTS: Record<string, { label: string; order: MergeRequestOrder; dir: 'asc' | 'desc' }> = {
  created_date: { label: 'Created date', order: 'created_at', dir: 'desc' },
  created_asc: { label: 'Oldest created', order: 'created_at', dir: 'asc' },
  updated_desc: { label: 'Last updated', order: 'updated_at', dir: 'desc' },
  updated_asc: { label: 'Oldest updated', order: 'updated_at', dir: 'asc' },
  title_asc: { label: 'Title', order: 'title', dir: 'asc' },
  title_desc: { label: 'Title, descending', order: 'title', dir: 'desc' },
};

interface ListQuery {
  state: Tab;
  search: string;
  labels: string[];
  milestone: string;
  author: string;
  assignee: string;
  reviewer: string;
  target: string;
  sort: string;
  page: number;
}

function labelsOf(request: FastifyRequest): string[] {
  const q = request.query as Record<string, unknown>;
  const raw = q['label_name[]'] ?? q.label_name;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  // Titles also split on commas, as the API's `labels` parameter takes them.
  return list.filter((l): l is string => typeof l === 'string' && l.length <= 255 && !l.includes('\u0000'))
    .flatMap((l) => l.split(',')).map((l) => l.trim()).filter(Boolean).slice(0, MAX_LABELS);
}

function readQuery(request: FastifyRequest): ListQuery {
  const state = queryText(request, 'state');
  const sort = queryText(request, 'sort');
  return {
    state: TABS.some(([s]) => s === state) ? state as Tab : 'opened',
    search: queryText(request, 'search'),
    labels: labelsOf(request),
    milestone: queryText(request, 'milestone_title'),
    author: queryText(request, 'author_username'),
    assignee: queryText(request, 'assignee_username'),
    reviewer: queryText(request, 'reviewer_username'),
    target: queryText(request, 'target_branch'),
    sort: sort in SORTS ? sort : 'created_date',
    page: pageNumber(request),
  };
}

/** The finder's filters of the list's address (the API's names: None/Any work as they do there). */
function filtersOf(q: ListQuery): MergeRequestFilters {
  const special = (v: string) => {
    const lower = v.toLowerCase();
    return lower === 'none' ? { none: true as const } : lower === 'any' ? { any: true as const } : { value: v };
  };
  const one = q.labels.length === 1 ? q.labels[0]!.toLowerCase() : '';
  const labels: MergeRequestFilters['labels'] = one === 'none' ? { none: true } : one === 'any' ? { any: true }
    : q.labels.length > 0 ? { value: q.labels } : undefined;
  return {
    scope: 'all',
    labels,
    milestone: q.milestone ? special(q.milestone) : undefined,
    authorUsername: q.author || undefined,
    assigneeUsername: q.assignee || undefined,
    reviewerUsername: q.reviewer || undefined,
    targetBranch: q.target || undefined,
    search: q.search || undefined,
  };
}

function queryParams(q: ListQuery, o: Partial<Record<'state' | 'page', string>> = {}): Record<string, string> {
  const out: Record<string, string> = {
    state: o.state ?? q.state, search: q.search, milestone_title: q.milestone, author_username: q.author,
    assignee_username: q.assignee, reviewer_username: q.reviewer, target_branch: q.target, sort: q.sort === 'created_date' ? '' : q.sort,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== ''));
}

function listUrl(path: string, q: ListQuery, o: Partial<Record<'state' | 'page', string>> = {}): string {
  const params = new URLSearchParams(queryParams(q, o));
  for (const l of q.labels) params.append('label_name[]', l);
  if (o.page) params.set('page', o.page);
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

function filterForm(path: string, q: ListQuery): SafeHtml {
  const field = (id: string, name: string, label: string, value: string) =>
    html`<div><label for="${id}">${label}</label><input type="search" id="${id}" name="${name}" value="${value}" maxlength="255"></div>`;
  return html`<form method="get" action="${path}" class="filters mr-filters" role="search" aria-label="Filter merge requests">
<input type="hidden" name="state" value="${q.state}">
${field('mr-search', 'search', 'Search', q.search)}
${field('mr-label', 'label_name[]', 'Label', q.labels.join(','))}
${field('mr-milestone', 'milestone_title', 'Milestone', q.milestone)}
${field('mr-author', 'author_username', 'Author', q.author)}
${field('mr-assignee', 'assignee_username', 'Assignee', q.assignee)}
${field('mr-reviewer', 'reviewer_username', 'Reviewer', q.reviewer)}
${field('mr-target', 'target_branch', 'Target branch', q.target)}
<div><label for="mr-sort">Sort by</label><select id="mr-sort" name="sort">${Object.entries(SORTS).map(([k, s]) =>
    html`<option value="${k}"${k === q.sort ? html` selected` : ''}>${s.label}</option>`)}</select></div>
<button type="submit">Filter</button>
</form>`;
}

interface Listed {
  container: MergeRequestContainer;
  nonArchived: boolean;
  from: ReferenceContext;
  /** The paths of the listed requests' projects (one for a project's list). */
  paths: (rows: MergeRequestRow[]) => Promise<ReadonlyMap<number, IssueProjectPath>>;
  /** Whether the viewer may see pipelines of this project. */
  canReadPipelines: (projectId: number) => Promise<boolean>;
  reference: (mr: { iid: number; references: { short: string; full: string } }) => string;
}

async function listBody(p: PageRequest, path: string, l: Listed): Promise<SafeHtml> {
  const { db, config } = p.ctx;
  const viewer: UserRow | null = p.session?.user ?? null;
  const q = readQuery(p.request);
  const filters = filtersOf(q);
  const base = filterMergeRequests(await visibleMergeRequests(db, viewer, l.container, l.nonArchived), filters, viewer);
  const counts = new Map<string, number>();
  for (const state of ['opened', 'merged', 'closed'] as const) {
    const byState = await countMergeRequestsByState(db, filterMergeRequests(base, { state }, viewer).limit(COUNT_CAP + 1));
    counts.set(state, byState.get(state) ?? 0);
  }
  const sort = SORTS[q.sort]!;
  const listed = q.state === 'all' ? base : filterMergeRequests(base, { state: q.state }, viewer);
  const rows = await orderMergeRequests(listed, sort.order, sort.dir).limit(PER_PAGE + 1).offset((q.page - 1) * PER_PAGE).execute();
  const shown = rows.slice(0, PER_PAGE);
  const projects = await l.paths(shown);
  const entities = await presentMergeRequests(db, shown, {
    externalUrl: config.externalUrl, projects, viewerId: viewer?.id ?? null, from: l.from, full: { canMerge: false },
  });
  const pipelineRights = new Map<number, boolean>();
  for (const id of new Set(shown.map((r) => r.project_id))) pipelineRights.set(id, await l.canReadPipelines(id));
  const shownCount = (n: number) => (n > COUNT_CAP ? `${COUNT_CAP}+` : String(n));
  const total = (counts.get('opened') ?? 0) + (counts.get('merged') ?? 0) + (counts.get('closed') ?? 0);
  const countOf = (state: Tab) => shownCount(state === 'all' ? total : counts.get(state) ?? 0);
  const tabs = TABS.map(([state, label]) => html`<a href="${listUrl(path, q, { state })}"${state === q.state ? html` aria-current="page"` : ''}>${label} <span class="badge count">${countOf(state)}</span></a>`);
  const items = entities.map((mr) => requestRow(mr, projects.get(mr.project_id)!.fullPath, {
    reference: l.reference(mr), canReadPipeline: pipelineRights.get(mr.project_id) ?? false,
  }));
  return html`<nav class="tabs" aria-label="States">${tabs}</nav>
${filterForm(path, q)}
${items.length === 0 ? html`<p class="muted" id="merge-requests">No merge requests to show.</p>` : html`<ul class="list" id="merge-requests">${items}</ul>`}
${pagination(path, q.page, rows.length > PER_PAGE, { ...queryParams(q), ...(q.labels.length > 0 ? { 'label_name[]': q.labels.join(',') } : {}) })}`;
}

export async function projectListPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const base = `/${enc(p.project.fullPath)}`;
  const path = `${base}/-/merge_requests`;
  const single = contextProjectPath(p.project);
  const body = await listBody(p, path, {
    container: { project: { id: p.project.project.id, canRead: canReadMergeRequest(p.project.actor, p.project.project) } },
    nonArchived: false, from: { project: p.project.project.id }, paths: async () => single,
    canReadPipelines: async () => p.project.can('read_build'),
    reference: (mr) => mr.references.short,
  });
  const canCreate = p.signedIn !== null && p.project.can('create_merge_request_in') && p.project.can('create_merge_request_from');
  return p.render({
    title: 'Merge requests', active: 'merge_requests',
    body: html`${canCreate ? html`<p class="actions"><a class="button primary" href="${path}/new">New merge request</a></p>` : ''}${body}`,
  });
}

export async function groupListPage(p: GroupSegmentRequest): Promise<SafeHtml> {
  const { db } = p.ctx;
  const path = `/${enc(p.group.fullPath)}/-/merge_requests`;
  const namespaceIds = [p.group.group.id, ...(await descendantGroupIds(db, [p.group.group.id])).keys()];
  const viewer = p.session?.user ?? null;
  const body = await listBody(p, path, {
    container: { namespaceIds }, nonArchived: true, from: { group: p.group.group.id },
    paths: (rows) => issueProjectPaths(db, rows.map((r) => r.project_id)),
    canReadPipelines: async (projectId) => {
      const found = await findVisibleProject(db, viewer, String(projectId));
      return found !== null && canOnProject(found.actor, 'read_build', found.project);
    },
    reference: (mr) => mr.references.full,
  });
  return frame({
    title: 'Merge requests', signedIn: p.signedIn, body,
    breadcrumbs: [{ text: p.group.fullName, href: `/${enc(p.group.fullPath)}` }, { text: 'Merge requests' }],
  });
}
