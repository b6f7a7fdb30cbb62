/**
 * A project's pipelines (issue 33 item 4): `/-/pipelines` (status, ref, commit, duration and each
 * stage's jobs; the API's scope, status and ref filters), `/-/pipelines/:id` (the pipeline graph:
 * stages as columns, each job's status and what it needs, downstream pipelines) with cancel and
 * retry for Developers, as the API's POST …/pipelines/:id/cancel and /retry decide.
 * Reading takes read_build, as GET /projects/:id/pipelines.
 */
import { isStorableId } from '../../../db/constraints.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect } from '../../layout.ts';
import type { WebArea, ProjectPageRequest } from '../../router.ts';
import { pageError } from '../../router.ts';
import type { BuildRow, PipelineRow } from '../../../db/tables/ci.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findPipelineInProject, findPipelinesByIds, projectPipelinesQuery } from '../../../domain/pipelines/pipelines.queries.ts';
import { latestPipelineJobs, pipelineJobSummaries } from '../../../domain/jobs/jobs.queries.ts';
import { cancelPipeline, hasCancelableJobs, retryPipeline } from '../../../domain/pipelines/pipeline-actions.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import { findVisibleProject } from '../../../http/loaders/containers.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import type { CommitData } from '../../../domain/pipelines/git-source.ts';
import { CSRF_FIELD } from '../../layout.ts';
import { enc, formatDuration, jobPath, pipelinePath, statusBadge, timeTag } from '../../ci-view.ts';

const PER_PAGE = 20;
const MAX_PAGE = 10_000;
const SCOPES = ['all', 'running', 'pending', 'finished', 'branches', 'tags'] as const;
const STATUSES = new Set(['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'success', 'failed', 'canceled',
  'skipped', 'manual', 'scheduled']);
const RETRYABLE = new Set(['failed', 'canceled']);

type Query = Record<string, string | undefined>;

/** A whole number from the query string within [1, max], else 1 (a page address is not an error). */
function pageNumber(value: string | undefined): number {
  const n = value !== undefined && /^\d{1,6}$/.test(value) ? Number(value) : 1;
  return n >= 1 && n <= MAX_PAGE ? n : 1;
}

function commitTitle(p: PipelineRow): string {
  try {
    return (JSON.parse(p.commit_data) as CommitData).title ?? '';
  } catch {
    return '';
  }
}

/** The names a job needs (stored as names, or as `{name, …}` objects for needs with options). */
function neededNames(needs: string | null): string[] {
  if (!needs) return [];
  return (JSON.parse(needs) as unknown[]).map((n) => (typeof n === 'string' ? n : String((n as { name?: unknown }).name ?? '')));
}

/**
 * A job's needs by the job they name: a need of a `parallel` or `parallel:matrix` job is one of
 * each of its instances (`build 1/3`, `build: [aws, prod]`), shown once with their count. A
 * 300-job pipeline of matrix jobs needing matrix jobs listed every instance under every job:
 * 150 KB of the page's HTML (bench/web-pages.ts).
 */
function neededGroups(names: string[]): { name: string; first: string; count: number }[] {
  const groups = new Map<string, { name: string; first: string; count: number }>();
  for (const n of names) {
    const name = /^(.+?)(?:: \[.*\]| \d+\/\d+)$/.exec(n)?.[1] ?? n;
    const g = groups.get(name);
    if (g) g.count += 1;
    else groups.set(name, { name, first: n, count: 1 });
  }
  return [...groups.values()];
}

function stagesOf<J extends { stage: string; stage_idx: number }>(jobs: J[]): { name: string; jobs: J[] }[] {
  const stages = new Map<number, { name: string; jobs: J[] }>();
  for (const j of jobs) {
    const s = stages.get(j.stage_idx) ?? { name: j.stage, jobs: [] };
    s.jobs.push(j);
    stages.set(j.stage_idx, s);
  }
  return [...stages.entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

function actionForm(p: ProjectPageRequest, action: string, label: string, primary = false): SafeHtml {
  return html`<form class="inline" method="post" action="${pipelinePath(p.project.fullPath, Number(p.rest[0]))}/${action}">
<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}"><button type="submit"${primary ? html` class="primary"` : ''}>${label}</button></form>`;
}

async function listPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const { db } = p.ctx;
  const q = p.request.query as Query;
  const scope = SCOPES.find((s) => s === q.scope) ?? 'all';
  const status = q.status !== undefined && STATUSES.has(q.status) ? q.status : undefined;
  const ref = q.ref !== undefined && q.ref !== '' && q.ref.length <= 255 ? q.ref : undefined;
  const page = pageNumber(q.page);
  const rows = await projectPipelinesQuery(db, p.project.project.id, {
    scope: scope === 'all' ? undefined : scope, status, ref, orderBy: 'id', sort: 'desc',
  }).limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const pipelines = rows.slice(0, PER_PAGE);
  const [jobs, users] = await Promise.all([
    pipelineJobSummaries(db, pipelines.map((r) => r.id)),
    findUserBasicsByIds(db, pipelines.flatMap((r) => (r.user_id === null ? [] : [r.user_id]))),
  ]);
  const userById = new Map(users.map((u) => [u.id, u]));
  const base = `/${enc(p.project.fullPath)}`;
  const filterUrl = (o: Query) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ scope, status, ref, ...o })) if (v !== undefined && v !== 'all') params.set(k, v);
    const s = params.toString();
    return `${base}/-/pipelines${s ? `?${s}` : ''}`;
  };
  const tabs = SCOPES.map((s) => html`<a href="${filterUrl({ scope: s, page: undefined })}"${s === scope ? html` aria-current="page"` : ''}>${s === 'all' ? 'All' : s[0]!.toUpperCase() + s.slice(1)}</a>`);
  const items = pipelines.map((pl) => {
    const user = pl.user_id === null ? undefined : userById.get(pl.user_id);
    const stageIcons = stagesOf(jobs.filter((j) => j.pipeline_id === pl.id)).map((s) => html`<li><span class="visually-hidden">${s.name}: </span>${
      s.jobs.map((j) => html`<a class="stage-job status-${j.status}" href="${jobPath(p.project.fullPath, j.id)}" title="${s.name}: ${j.name} – ${j.status}">${j.name}</a>`)}</li>`);
    return html`<li class="pipeline-row" data-pipeline="${pl.id}">
<div>${statusBadge(pl.status)} <a class="item-title" href="${pipelinePath(p.project.fullPath, pl.id)}">#${pl.id}</a>
${pl.tag ? 'tag' : 'branch'} <code>${pl.ref}</code> · <a href="${base}/-/commit/${pl.sha}"><code>${pl.sha.slice(0, 8)}</code></a> ${commitTitle(pl)}</div>
<div class="muted">${pl.source}${user ? html` · by <a href="/${enc(user.username)}">${user.name}</a>` : ''} · ${timeTag(pl.created_at)}${pl.duration !== null ? html` · ${formatDuration(pl.duration)}` : ''}</div>
<ul class="stages" aria-label="Stages">${stageIcons}</ul>
</li>`;
  });
  const pager = html`<nav class="pagination" aria-label="Pages">${page > 1 ? html`<a href="${filterUrl({ page: String(page - 1) })}">Previous</a>` : ''}${
    rows.length > PER_PAGE ? html`<a href="${filterUrl({ page: String(page + 1) })}">Next</a>` : ''}</nav>`;
  return p.render({
    title: 'Pipelines', active: 'pipelines',
    body: html`<nav class="tabs" aria-label="Scopes">${tabs}</nav>
<form method="get" action="${base}/-/pipelines" class="filters"><input type="hidden" name="scope" value="${scope}">
<label for="ref-filter">Branch or tag</label><input type="search" id="ref-filter" name="ref" value="${ref ?? ''}" maxlength="255">
<button type="submit">Filter</button></form>
${pipelines.length === 0 ? html`<p class="muted">No pipelines to show.</p>` : html`<ul class="list pipelines">${items}</ul>`}
${pager}`,
  });
}

async function loadPipeline(p: ProjectPageRequest): Promise<PipelineRow> {
  const id = p.rest[0];
  // Digits beyond the id column's range name nothing (PostgreSQL refuses them as integers).
  if (id === undefined || !/^\d{1,10}$/.test(id) || !isStorableId(Number(id))) throw pageError(404);
  const pipeline = await findPipelineInProject(p.ctx.db, p.project.project.id, Number(id));
  if (!pipeline) throw pageError(404);
  return pipeline;
}

/**
 * Each bridge's downstream pipeline, read in one query for them all (a pipeline of many bridges
 * read them one by one before: bench/web-pages.ts), and each other project in one lookup.
 */
async function downstreamLinks(p: ProjectPageRequest, jobs: BuildRow[]): Promise<Map<number, { href: string; status: string }>> {
  const out = new Map<number, { href: string; status: string }>();
  const bridges = jobs.filter((j) => j.downstream_pipeline_id !== null);
  if (bridges.length === 0) return out;
  const pipelines = await findPipelinesByIds(p.ctx.db, [...new Set(bridges.map((j) => j.downstream_pipeline_id!))]);
  // A downstream pipeline in another project is linked only for a viewer who may see that project.
  const paths = new Map<number, string | null>([[p.project.project.id, p.project.fullPath]]);
  for (const downstream of pipelines.values()) {
    if (paths.has(downstream.project_id)) continue;
    const other = await findVisibleProject(p.ctx.db, p.session?.user ?? null, String(downstream.project_id));
    paths.set(downstream.project_id, other && canOnProject(other.actor, 'read_build', other.project)
      ? (other.namespace.fullPath === '' ? other.project.path : `${other.namespace.fullPath}/${other.project.path}`) : null);
  }
  for (const j of bridges) {
    const downstream = pipelines.get(j.downstream_pipeline_id!);
    const fullPath = downstream ? paths.get(downstream.project_id) : null;
    if (downstream && fullPath) out.set(j.id, { href: pipelinePath(fullPath, downstream.id), status: downstream.status });
  }
  return out;
}

async function showPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const pipeline = await loadPipeline(p);
  const jobs = await latestPipelineJobs(p.ctx.db, pipeline.id);
  const downstream = await downstreamLinks(p, jobs);
  const [user] = pipeline.user_id === null ? [] : await findUserBasicsByIds(p.ctx.db, [pipeline.user_id]);
  const canUpdate = p.signedIn !== null && p.project.can('update_build');
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const columns = stagesOf(jobs).map((s) => html`<section class="stage" aria-label="Stage ${s.name}"><h2>${s.name}</h2><ul>${s.jobs.map((j) => {
    const needs = neededNames(j.needs);
    const down = downstream.get(j.id);
    return html`<li class="job-card" id="job-${j.id}">${statusBadge(j.status, { allowFailure: j.allow_failure === 1 })}
<a href="${j.type === 'bridge' && down ? down.href : jobPath(p.project.fullPath, j.id)}">${j.name}</a>${
  j.type === 'bridge' ? html` <span class="badge">trigger</span>${down ? html` → <a href="${down.href}">downstream</a> ${statusBadge(down.status)}` : ''}` : ''}${
  needs.length > 0 ? html`<div class="needs muted">needs ${neededGroups(needs).map((g, i) => {
    const needed = byName.get(g.first);
    const label = g.count > 1 ? `${g.name} (${g.count} jobs)` : g.first;
    return html`${i > 0 ? ', ' : ''}${needed ? html`<a href="#job-${needed.id}">${label}</a>` : label}`;
  })}</div>` : ''}</li>`;
  })}</ul></section>`);
  const buttons = canUpdate ? html`<div class="actions">${
    hasCancelableJobs(jobs) ? actionForm(p, 'cancel', 'Cancel running') : ''}${
    jobs.some((j) => RETRYABLE.has(j.status)) ? actionForm(p, 'retry', 'Retry', true) : ''}</div>` : '';
  const base = `/${enc(p.project.fullPath)}`;
  return p.render({
    title: `Pipeline #${pipeline.id}`, active: 'pipelines',
    breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Pipelines', href: `${base}/-/pipelines` }],
    body: html`<div class="panel pipeline-header">${statusBadge(pipeline.status)}
<span>for ${pipeline.tag ? 'tag' : 'branch'} <code>${pipeline.ref}</code> at <a href="${base}/-/commit/${pipeline.sha}"><code>${pipeline.sha.slice(0, 8)}</code></a> ${commitTitle(pipeline)}</span>
<div class="muted">${pipeline.source}${user ? html` · triggered by <a href="/${enc(user.username)}">${user.name}</a>` : ''} · created ${timeTag(pipeline.created_at)}${
  pipeline.duration !== null ? html` · took ${formatDuration(pipeline.duration)}` : ''}</div>
${pipeline.yaml_errors ? html`<div class="alert" role="alert">${pipeline.yaml_errors}</div>` : ''}
${buttons}</div>
${jobs.length === 0 ? html`<p class="muted">This pipeline has no jobs.</p>` : html`<div class="pipeline-graph">${columns}</div>`}`,
  });
}

async function act(p: ProjectPageRequest): Promise<ReturnType<typeof redirect>> {
  const action = p.rest[1];
  if (p.rest.length !== 2 || (action !== 'cancel' && action !== 'retry')) throw pageError(404);
  const pipeline = await loadPipeline(p);
  if (!p.project.can('update_build')) throw pageError(p.project.can('read_build') ? 403 : 404);
  const env = ciEnvFrom(p.ctx.db, p.ctx.config);
  if (action === 'cancel') await cancelPipeline(env, pipeline);
  else await retryPipeline(env, pipeline, p.session!.user.id);
  return redirect(p.reply, 'POST', pipelinePath(p.project.fullPath, pipeline.id));
}

const pipelines: WebArea = (web) => {
  web.project('GET', 'pipelines', async (p) => {
    if (!p.project.can('read_build')) throw pageError(404);
    if (p.rest.length === 0) return listPage(p);
    // `/failures` (the chat notifications' link to a failed pipeline's jobs) is the same graph,
    // whose failed jobs are marked; the Service shows them on a tab of the pipeline's page.
    if (p.rest.length === 1 || (p.rest.length === 2 && p.rest[1] === 'failures')) return showPage(p);
    throw pageError(404);
  });
  web.project('POST', 'pipelines', async (p) => {
    if (!p.project.can('read_build')) throw pageError(404);
    return act(p);
  });
};

export default pipelines;
