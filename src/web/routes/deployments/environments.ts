/**
 * A project's environments: `/-/environments` (the available or stopped ones, as GET
 * /projects/:id/environments?states= lists them, each with its last successful deployment) and
 * `/-/environments/:id` (the environment and its deployments, newest first, as GET
 * /projects/:id/deployments?environment= lists them; the deployment hook's `environment` lives
 * here). Reading takes read_environment, as the API's environment routes; the deployments list
 * also read_deployment. A deployment's job and commit link to their pages.
 */
import type { DeploymentRow, EnvironmentRow } from '../../../db/tables/environments.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { findEnvironmentInProject, projectEnvironmentsQuery } from '../../../domain/environments/environments.queries.ts';
import { lastSuccessfulDeployments, projectDeploymentsQuery } from '../../../domain/deployments/deployments.queries.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { pageNumber, pagination, PER_PAGE } from '../../components/lists.ts';
import { jobPath, statusBadge, timeTag } from '../../ci-view.ts';
import { encodePath } from '../repository/repository-page.ts';

const STATES = ['available', 'stopped'] as const;

/** An environment's external URL as a link only when it is http(s) (a stored `javascript:` never becomes one). */
function externalLink(e: EnvironmentRow): SafeHtml | string {
  if (!e.external_url || !/^https?:\/\//i.test(e.external_url)) return '';
  return html` · <a href="${e.external_url}" rel="nofollow noopener">${e.external_url}</a>`;
}

function deploymentLine(p: ProjectPageRequest, d: DeploymentRow, users: Map<number, { username: string; name: string }>): SafeHtml {
  const base = `/${encodePath(p.project.fullPath)}`;
  const user = d.user_id === null ? undefined : users.get(d.user_id);
  return html`${statusBadge(d.status)} #${d.iid} · ${d.tag ? 'tag' : 'branch'} <code>${d.ref}</code> · <a href="${base}/-/commit/${d.sha}"><code>${d.sha.slice(0, 8)}</code></a>${
    d.deployable_id !== null && p.project.can('read_build') ? html` · <a href="${jobPath(p.project.fullPath, d.deployable_id)}">job #${d.deployable_id}</a>` : ''}${
    user ? html` · by <a href="/${encodeURIComponent(user.username)}">${user.name}</a>` : ''} · ${timeTag(d.created_at)}`;
}

async function usersOf(p: ProjectPageRequest, deployments: DeploymentRow[]) {
  const ids = [...new Set(deployments.flatMap((d) => (d.user_id === null ? [] : [d.user_id])))];
  return new Map((await findUserBasicsByIds(p.ctx.db, ids)).map((u) => [u.id, u]));
}

async function listPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const asked = (p.request.query as Record<string, unknown>).scope;
  const scope = STATES.find((s) => s === asked) ?? 'available';
  const page = pageNumber(p.request);
  const rows = await projectEnvironmentsQuery(p.ctx.db, p.project.project.id, { states: scope })
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const shown = rows.slice(0, PER_PAGE);
  const readDeployments = p.project.can('read_deployment');
  const last = readDeployments ? await lastSuccessfulDeployments(p.ctx.db, shown.map((e) => e.id)) : new Map<number, DeploymentRow>();
  const users = await usersOf(p, [...last.values()]);
  const base = `/${encodePath(p.project.fullPath)}/-/environments`;
  const tabs = STATES.map((s) => html`<a href="${base}?scope=${s}"${s === scope ? html` aria-current="page"` : ''}>${s === 'available' ? 'Available' : 'Stopped'}</a>`);
  const items = shown.map((e) => {
    const d = last.get(e.id);
    return html`<li><a class="item-title" href="${base}/${e.id}">${e.name}</a> <span class="badge">${e.tier}</span>${externalLink(e)}
<div class="muted">${d ? deploymentLine(p, d, users) : 'Not deployed yet'}</div></li>`;
  });
  return p.render({
    title: 'Environments', active: 'environments',
    body: html`<nav class="tabs" aria-label="States">${tabs}</nav>
${items.length === 0 ? html`<p class="muted">No ${scope} environments.</p>` : html`<ul class="list" id="environments">${items}</ul>`}
${pagination(base, page, rows.length > PER_PAGE, { scope })}`,
  });
}

async function showPage(p: ProjectPageRequest, segment: string): Promise<SafeHtml> {
  const id = /^\d{1,10}$/.test(segment) ? Number(segment) : 0;
  const e = isStorableId(id) ? await findEnvironmentInProject(p.ctx.db, p.project.project.id, id) : undefined;
  if (!e) throw pageError(404);
  const page = pageNumber(p.request);
  const readDeployments = p.project.can('read_deployment');
  const rows = readDeployments
    ? await projectDeploymentsQuery(p.ctx.db, p.project.project.id, { environmentId: e.id, orderBy: 'id', sort: 'desc' })
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute() : [];
  const shown = rows.slice(0, PER_PAGE);
  const users = await usersOf(p, shown);
  const base = `/${encodePath(p.project.fullPath)}`;
  return p.render({
    title: e.name, active: 'environments',
    breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Environments', href: `${base}/-/environments` }],
    body: html`<div class="panel" id="environment"><p><span class="badge">${e.state}</span> <span class="badge">${e.tier}</span>${externalLink(e)}</p>
${e.auto_stop_at ? html`<p class="muted">Stops automatically ${timeTag(e.auto_stop_at)}</p>` : ''}</div>
${readDeployments ? html`<h2>Deployments</h2>
${shown.length === 0 ? html`<p class="muted">No deployments yet.</p>` : html`<ul class="list" id="deployments">${shown.map((d) => html`<li id="deployment-${d.id}">${deploymentLine(p, d, users)}</li>`)}</ul>`}
${pagination(`${base}/-/environments/${e.id}`, page, rows.length > PER_PAGE)}` : ''}`,
  });
}

const environments: WebArea = (web) => {
  web.project('GET', 'environments', async (p) => {
    if (!p.project.can('read_environment')) throw pageError(404);
    if (p.rest.length === 0) return listPage(p);
    if (p.rest.length === 1) return showPage(p, p.rest[0]!);
    throw pageError(404);
  });
};

export default environments;
