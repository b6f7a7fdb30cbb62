/**
 * A project's package registry: `/-/packages` (the packages GET /projects/:id/packages lists,
 * newest first) and `/-/packages/:id` (the package entity's `_links.web_path`: its files and its
 * other versions, as GET …/packages/:package_id and …/package_files answer). Reading takes the
 * packages feature and read_package, as the API's package routes (package-access.ts
 * mayOnPackages); hidden, processing and doomed packages are not shown, as there.
 */
import { isStorableId } from '../../../db/constraints.ts';
import {
  allPackageFiles, findProjectPackage, otherVersions, packagesQuery,
} from '../../../domain/packages/packages.queries.ts';
import { DISPLAYABLE_STATUSES, statusName } from '../../../domain/packages/package-names.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { pageNumber, pagination, PER_PAGE } from '../../components/lists.ts';
import { pipelinePath, timeTag } from '../../ci-view.ts';
import { encodePath } from '../repository/repository-page.ts';

/** Files listed on a package's page. */
const MAX_FILES = 500;

const mayRead = (p: ProjectPageRequest) => Boolean(p.project.project.packages_enabled) && p.project.can('read_package');

async function listPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const page = pageNumber(p.request);
  const rows = await packagesQuery(p.ctx.db, [p.project.project.id], { displayable: DISPLAYABLE_STATUSES }, 'created_at', 'desc')
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const base = `/${encodePath(p.project.fullPath)}/-/packages`;
  const items = rows.slice(0, PER_PAGE).map((r) => html`<li><a class="item-title" href="${base}/${r.id}">${r.name}</a> <code>${r.version ?? ''}</code>
<span class="badge">${r.package_type}</span><div class="muted">${timeTag(r.created_at)}</div></li>`);
  return p.render({
    title: 'Package registry', active: 'packages',
    body: html`${items.length === 0 ? html`<p class="muted">No packages yet.</p>` : html`<ul class="list" id="packages">${items}</ul>`}
${pagination(base, page, rows.length > PER_PAGE)}`,
  });
}

async function showPage(p: ProjectPageRequest, segment: string): Promise<SafeHtml> {
  const id = /^\d{1,10}$/.test(segment) ? Number(segment) : 0;
  const pkg = isStorableId(id) ? await findProjectPackage(p.ctx.db, p.project.project.id, id, DISPLAYABLE_STATUSES) : undefined;
  if (!pkg) throw pageError(404);
  const [files, versions] = await Promise.all([allPackageFiles(p.ctx.db, pkg.id), otherVersions(p.ctx.db, pkg)]);
  const base = `/${encodePath(p.project.fullPath)}`;
  return p.render({
    title: `${pkg.name} ${pkg.version ?? ''}`.trim(), active: 'packages',
    breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Package registry', href: `${base}/-/packages` }],
    body: html`<div class="panel" id="package"><p><span class="badge">${pkg.package_type}</span> <span class="badge">${statusName(pkg.status)}</span>
created ${timeTag(pkg.created_at)}${pkg.pipeline_id !== null && p.project.can('read_build')
    ? html` by <a href="${pipelinePath(p.project.fullPath, pkg.pipeline_id)}">pipeline #${pkg.pipeline_id}</a>` : ''}</p></div>
<h2>Files</h2>
${files.length === 0 ? html`<p class="muted">No files.</p>` : html`<table class="tree" id="package-files"><thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">SHA-256</th></tr></thead>
<tbody>${files.slice(0, MAX_FILES).map((f) => html`<tr><td>${f.file_name}</td><td class="muted">${f.size} bytes</td><td><code>${f.file_sha256 ?? ''}</code></td></tr>`)}</tbody></table>`}
${versions.length > 0 ? html`<h2>Other versions</h2><ul class="list" id="versions">${versions.map((v) => html`<li><a href="${base}/-/packages/${v.id}">${v.version ?? '(no version)'}</a></li>`)}</ul>` : ''}`,
  });
}

const packages: WebArea = (web) => {
  web.project('GET', 'packages', async (p) => {
    if (!mayRead(p)) throw pageError(404);
    if (p.rest.length === 0) return listPage(p);
    if (p.rest.length === 1) return showPage(p, p.rest[0]!);
    throw pageError(404);
  });
};

export default packages;
