/**
 * A project's labels (`/-/labels`) and milestones (`/-/milestones`, `/-/milestones/<iid>`: the
 * API's web_url of a project milestone), read as GET /projects/:id/labels and …/milestones read
 * them: read_label and read_milestone, else the 404 page. The labels are the project's and its
 * group's and ancestors' (include_ancestor_groups), each with the open issues carrying it as the
 * viewer may see them (with_counts); the milestones the project's and its groups' (the
 * Service's project milestone page lists the group milestones too).
 */
import { labelIssueCounts, labelsQuery } from '../../../domain/labels/labels.queries.ts';
import { milestonesQuery } from '../../../domain/milestones/milestones.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { INT32_MAX } from '../../../http/input/params.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { html } from '../../html.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import { enc, groupPath, issuesPath, labelChip, queryValue, renderMarkdown } from '../../issue-view.ts';
import { milestoneIssues, milestoneListBody, milestoneListState, milestonePageBody, stateFilter } from './milestone-view.ts';

const PER_PAGE = 20;
const MAX_PAGE = 500;
/** Milestones listed on one page (a project has tens, not thousands). */
const MAX_MILESTONES = 200;

function pageOf(query: Record<string, unknown>): number {
  const raw = queryValue(query, 'page', 6);
  return /^\d{1,6}$/.test(raw) ? Math.min(Math.max(Number(raw), 1), MAX_PAGE) : 1;
}

/** The project's group and its ancestors, whose labels and milestones the project sees. */
const groupIdsOf = (p: ProjectPageRequest) => (p.project.namespace.namespace.kind === 'group' ? p.project.lineage : []);

async function labelsPage(p: ProjectPageRequest) {
  const { db } = p.ctx;
  const { project, actor, fullPath } = p.project;
  const query = p.request.query as Record<string, unknown>;
  const search = queryValue(query, 'search');
  const page = pageOf(query);
  const rows = await labelsQuery(db, { projectIds: [project.id], groupIds: groupIdsOf(p) }, { search: search || undefined })
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const labels = rows.slice(0, PER_PAGE);
  const counts = await labelIssueCounts(db, {
    labelIds: labels.map((l) => l.id), projectIds: [project.id],
    allConfidential: canOnProject(actor, 'read_confidential_issues', project), userId: p.session?.user.id ?? null,
  });
  const base = `/${enc(fullPath)}/-/labels`;
  const issues = issuesPath(fullPath);
  const more = (n: number) => `${base}?${new URLSearchParams({ ...(search ? { search } : {}), page: String(n) })}`;
  return p.render({
    title: 'Labels', active: 'labels',
    body: html`<form method="get" action="${base}" class="filters" role="search"><label for="label-search">Search labels</label>
<input type="search" id="label-search" name="search" value="${search}" maxlength="255"><button type="submit">Search</button></form>
${labels.length === 0 ? html`<p class="muted" id="no-labels">No labels to show.</p>` : html`<ul class="list labels">${labels.map((l) => {
    const open = counts.get(l.id)?.opened ?? 0;
    return html`<li id="label-${l.id}">${labelChip({ name: l.title, color: l.color, description: l.description })}
${l.group_id !== null ? html` <span class="badge">Group label</span>` : ''}
<span class="muted">${l.description ?? ''}</span>
<a href="${issues}?${new URLSearchParams({ 'label_name[]': l.title }).toString()}">${open} open ${open === 1 ? 'issue' : 'issues'}</a></li>`;
  })}</ul>`}
${page > 1 || rows.length > PER_PAGE ? html`<nav class="pagination" aria-label="Pages">${page > 1 ? html`<a href="${more(page - 1)}" rel="prev">Previous</a>` : ''}<span>Page ${page}</span>${
  rows.length > PER_PAGE ? html`<a href="${more(page + 1)}" rel="next">Next</a>` : ''}</nav>` : ''}`,
  });
}

async function milestonesPage(p: ProjectPageRequest) {
  const { db } = p.ctx;
  const { project, fullPath } = p.project;
  const state = milestoneListState(p.request.query as Record<string, unknown>);
  const groupIds = groupIdsOf(p);
  const rows = await milestonesQuery(db, { projectIds: [project.id], groupIds }, { state: stateFilter(state) })
    .limit(MAX_MILESTONES).execute();
  const groups = await namespacePathsById(db, [...new Set(rows.flatMap((m) => (m.group_id === null ? [] : [m.group_id])))]);
  const base = `/${enc(fullPath)}/-/milestones`;
  return p.render({
    title: 'Milestones', active: 'milestones',
    body: milestoneListBody(base, state, rows,
      (m) => (m.group_id === null ? `${base}/${m.iid}` : `${groupPath(groups.get(m.group_id)?.fullPath ?? '')}/-/milestones/${m.iid}`),
      (m) => (m.group_id === null ? '' : `Group milestone · ${groups.get(m.group_id)?.fullName ?? ''}`)),
  });
}

async function milestonePage(p: ProjectPageRequest, markdown: MarkdownRenderer) {
  const { db } = p.ctx;
  const { project, actor, fullPath } = p.project;
  const raw = p.rest[0] ?? '';
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > INT32_MAX) throw pageError(404);
  const milestone = await milestonesQuery(db, { projectIds: [project.id], groupIds: [] }, { iids: [Number(raw)] }).executeTakeFirst();
  if (!milestone) throw pageError(404);
  const viewer = p.session?.user ?? null;
  const [description, issues] = await Promise.all([
    milestone.description ? renderMarkdown(markdown, p.ctx, viewer, p.project, milestone.description) : Promise.resolve(null),
    milestoneIssues(db, viewer, {
      project: {
        id: project.id, canRead: canOnProject(actor, 'read_issue', project),
        canReadConfidential: canOnProject(actor, 'read_confidential_issues', project),
      },
    }, milestone),
  ]);
  const base = `/${enc(fullPath)}`;
  return p.render({
    title: milestone.title, active: 'milestones',
    breadcrumbs: [{ text: project.name, href: base }, { text: 'Milestones', href: `${base}/-/milestones` }, { text: milestone.title }],
    body: milestonePageBody(milestone, description, issues, false),
  });
}

const labelsAndMilestones: WebArea = (web) => {
  web.project('GET', 'labels', async (p) => {
    if (!p.project.can('read_label') || p.rest.length !== 0) throw pageError(404);
    return labelsPage(p);
  });
  web.project('GET', 'milestones', async (p) => {
    if (!p.project.can('read_milestone')) throw pageError(404);
    if (p.rest.length === 0) return milestonesPage(p);
    if (p.rest.length === 1) return milestonePage(p, web.markdown);
    throw pageError(404);
  });
};

export default labelsAndMilestones;
