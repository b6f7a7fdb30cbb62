/**
 * Pieces several pages show: a list of projects or groups with their full paths, a page number
 * from the query and the previous/next links. Lists are read a page at a time (one row more than
 * shown says whether a next page exists) and their namespaces in one batch, never per row.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { namespacePaths, namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { visibilityName } from '../../domain/permissions/access.ts';
import { html, type SafeHtml } from '../html.ts';

export const PER_PAGE = 20;
/** Deeper pages than this are not offered: an OFFSET that far reads more rows than any reader pages through. */
const MAX_PAGE = 500;

/** `?page=` as a page number, 1 when absent or not a number in range. */
export function pageNumber(request: FastifyRequest): number {
  const raw = (request.query as Record<string, unknown>).page;
  const n = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), MAX_PAGE);
}

/** `?<name>=` as text of at most `max` characters, '' otherwise. */
export function queryText(request: FastifyRequest, name: string, max = 255): string {
  const raw = (request.query as Record<string, unknown>)[name];
  return typeof raw === 'string' && raw.length <= max && !/[\u0000]/.test(raw) ? raw.trim() : '';
}

export function pagination(path: string, page: number, hasNext: boolean, extra: Record<string, string> = {}): SafeHtml {
  if (page === 1 && !hasNext) return html``;
  const link = (n: number) => {
    const q = new URLSearchParams({ ...Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== '')), page: String(n) });
    return `${path}?${q}`;
  };
  return html`<nav class="pagination" aria-label="Pages">
${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">Previous</a>` : ''}
<span>Page ${page}</span>
${hasNext ? html`<a href="${link(page + 1)}" rel="next">Next</a>` : ''}
</nav>`;
}

export interface ListedProject { project: ProjectRow; fullPath: string; namespaceName: string }

/** The projects with their full paths, their namespaces read in one batch. */
export async function withPaths(db: Kysely<DB>, projects: ProjectRow[]): Promise<ListedProject[]> {
  const paths = await namespacePathsById(db, [...new Set(projects.map((p) => p.namespace_id))]);
  return projects.flatMap((project) => {
    const ns = paths.get(project.namespace_id);
    return ns ? [{ project, fullPath: `${ns.fullPath}/${project.path}`, namespaceName: ns.fullName }] : [];
  });
}

const pathHref = (fullPath: string) => `/${fullPath.split('/').map(encodeURIComponent).join('/')}`;

export function projectList(items: ListedProject[], empty: string, id = 'projects'): SafeHtml {
  if (items.length === 0) return html`<p class="muted" id="${id}">${empty}</p>`;
  return html`<ul class="list" id="${id}">${items.map((i) => html`<li>
<a class="item-title" href="${pathHref(i.fullPath)}">${i.namespaceName} / ${i.project.name}</a>
<span class="badge">${visibilityName(i.project.visibility_level)}</span>${i.project.archived ? html` <span class="badge">archived</span>` : ''}
${i.project.description ? html`<div class="muted">${i.project.description}</div>` : ''}
</li>`)}</ul>`;
}

export async function groupList(db: Kysely<DB>, groups: NamespaceRow[], empty: string, id = 'groups'): Promise<SafeHtml> {
  if (groups.length === 0) return html`<p class="muted" id="${id}">${empty}</p>`;
  const paths = await namespacePaths(db, groups);
  return html`<ul class="list" id="${id}">${groups.map((g) => {
    const p = paths.get(g.id)!;
    return html`<li>
<a class="item-title" href="${pathHref(p.fullPath)}">${p.fullName}</a>
<span class="badge">${visibilityName(g.visibility_level)}</span>
${g.description ? html`<div class="muted">${g.description}</div>` : ''}
</li>`;
  })}</ul>`;
}

export { pathHref };
