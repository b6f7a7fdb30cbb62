/**
 * A project's releases: `/-/releases` (newest released first, as GET /projects/:id/releases) and
 * `/-/releases/:tag` (the web_url of the release entity and the release hook's `url`), with its
 * links; `/-/releases/:tag/downloads/*filepath` sends the browser on to the link of that direct
 * asset path (the release entity's `direct_asset_url`, as the Service's releases downloads route
 * redirects) and `/-/releases/:tag/evidences/:id.json` answers the evidence's summary (the
 * entity's `evidences[].filepath`). Reading takes read_release; one release also download_code,
 * as GET /projects/:id/releases/:tag_name demands. `/-/releases/:tag/edit` (the entity's
 * `_links.edit_url`) edits its name, notes and release date as PUT …/releases/:tag_name does,
 * for those with update_release (the 404 page for everyone else, as the Service's edit page).
 */
import type { ReleaseRow } from '../../../db/tables/releases.ts';
import {
  evidencesOfReleases, findRelease, linksOfReleases, projectReleasesQuery,
} from '../../../domain/releases/releases.queries.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { CSRF_FIELD, redirect, sendPage } from '../../layout.ts';
import { updateRelease } from '../../../domain/releases/write-release.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { formOf, field } from '../profile/profile-view.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { markdownBlock } from '../../components/markdown.ts';
import { pageNumber, pagination, PER_PAGE } from '../../components/lists.ts';
import { timeTag } from '../../ci-view.ts';
import { encodePath } from '../repository/repository-page.ts';

const MAX_TAG = 1024;
/** The API's bounds of a release's name (P.name) and notes (P.string). */
const MAX_NAME = 255;
const MAX_DESCRIPTION = 1024 * 1024;

const releasePath = (base: string, tag: string) => `${base}/-/releases/${encodeURIComponent(tag)}`;

/** The links' anchors: only http(s) and the project's own paths become links (no javascript: URLs). */
function linkHref(url: string): string | null {
  return /^https?:\/\//i.test(url) ? url : null;
}

type Renderers = { markdown: Parameters<typeof markdownBlock>[0] };

async function releaseCard(p: ProjectPageRequest, web: Renderers, r: ReleaseRow, full: boolean): Promise<SafeHtml> {
  const base = `/${encodePath(p.project.fullPath)}`;
  const code = p.project.can('download_code');
  const [links, authors] = await Promise.all([
    linksOfReleases(p.ctx.db, [r.id]),
    r.author_id === null ? Promise.resolve([]) : findUserBasicsByIds(p.ctx.db, [r.author_id]),
  ]);
  const author = authors[0];
  const title = r.name ?? r.tag;
  return html`<section class="panel release" id="release-${r.id}" aria-label="${title}">
${full ? '' : html`<h2><a href="${releasePath(base, r.tag)}">${title}</a></h2>`}${Date.parse(r.released_at) > Date.now() ? html`<p><span class="badge">upcoming</span></p>` : ''}
<p class="muted">${code ? html`<a href="${base}/-/tags/${encodeURIComponent(r.tag)}"><code>${r.tag}</code></a>${r.sha
    ? html` · <a href="${base}/-/commit/${r.sha}"><code>${r.sha.slice(0, 8)}</code></a>` : ''} · ` : ''}released ${timeTag(r.released_at)}${author
    ? html` by <a href="/${encodeURIComponent(author.username)}">${author.name}</a>` : ''}</p>
${r.description ? await markdownBlock(web.markdown, r.description, p.ctx.config.externalUrl) : ''}
${links.length > 0 ? html`<h3>Assets</h3><ul class="release-links">${links.map((l) => {
    const href = linkHref(l.url);
    return html`<li>${href ? html`<a href="${href}" rel="nofollow noopener">${l.name}</a>` : l.name} <span class="muted">${l.link_type}</span></li>`;
  })}</ul>` : ''}
</section>`;
}

async function listPage(p: ProjectPageRequest, web: Parameters<typeof releaseCard>[1]): Promise<SafeHtml> {
  const page = pageNumber(p.request);
  const rows = await projectReleasesQuery(p.ctx.db, p.project.project.id, 'released_at', 'desc')
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const cards = [];
  for (const r of rows.slice(0, PER_PAGE)) cards.push(await releaseCard(p, web, r, false));
  return p.render({
    title: 'Releases', active: 'releases',
    body: html`${cards.length === 0 ? html`<p class="muted">No releases yet.</p>` : html`<div id="releases">${cards}</div>`}
${pagination(`/${encodePath(p.project.fullPath)}/-/releases`, page, rows.length > PER_PAGE)}`,
  });
}

function editForm(p: ProjectPageRequest, r: ReleaseRow, errors: string[] = []): SafeHtml {
  const base = `/${encodePath(p.project.fullPath)}`;
  return p.render({
    title: `Edit release ${r.tag}`, active: 'releases',
    breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Releases', href: `${base}/-/releases` },
      { text: r.name ?? r.tag, href: releasePath(base, r.tag) }],
    body: html`${errors.length ? html`<div class="alert" role="alert"><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<form method="post" action="${releasePath(base, r.tag)}/edit" id="release-form">
<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}">
<label for="release-name">Release title</label><input id="release-name" name="name" maxlength="${MAX_NAME}" value="${r.name ?? ''}">
<label for="release-date">Release date (ISO 8601)</label><input id="release-date" name="released_at" value="${r.released_at}">
<label for="release-description">Release notes (Markdown)</label><textarea id="release-description" name="description" rows="12">${r.description ?? ''}</textarea>
<button type="submit" class="primary">Save changes</button>
</form>`,
  });
}

/** The form's changes, as PUT /projects/:id/releases/:tag_name takes them; the refusals otherwise. */
function changesOf(form: Record<string, unknown>): { name?: string; description?: string; releasedAt?: string } | string[] {
  const errors: string[] = [];
  const name = field(form, 'name');
  const description = field(form, 'description');
  const date = field(form, 'released_at')?.trim();
  if (name !== undefined && (name.length > MAX_NAME || !isStorableText(name))) errors.push('name is invalid');
  if (description !== undefined && (description.length > MAX_DESCRIPTION || !isStorableText(description))) {
    errors.push('description is invalid');
  }
  const releasedAt = date ? new Date(date.length <= 64 ? date : 'x') : null;
  if (releasedAt && Number.isNaN(releasedAt.getTime())) errors.push('released_at is invalid');
  if (errors.length > 0) return errors;
  return { name, description, releasedAt: releasedAt ? releasedAt.toISOString() : undefined };
}

const releases: WebArea = (web) => {
  web.project('GET', 'releases', async (p) => {
    if (!p.project.can('read_release')) throw pageError(404);
    if (p.rest.length === 0) return listPage(p, web);
    const tag = p.rest[0]!;
    if (!p.project.can('download_code') || tag.length > MAX_TAG) throw pageError(404);
    const release = await findRelease(p.ctx.db, p.project.project.id, tag);
    if (!release) throw pageError(404);
    if (p.rest.length === 1) {
      const base = `/${encodePath(p.project.fullPath)}`;
      return p.render({
        title: release.name ?? release.tag, active: 'releases',
        breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Releases', href: `${base}/-/releases` }],
        body: html`${p.project.can('update_release') ? html`<p><a href="${releasePath(base, release.tag)}/edit" id="edit-release">Edit release</a></p>` : ''}
${await releaseCard(p, web, release, true)}`,
      });
    }
    if (p.rest.length === 2 && p.rest[1] === 'edit') {
      if (!p.project.can('update_release')) throw pageError(404);
      return editForm(p, release);
    }
    if (p.rest[1] === 'downloads' && p.rest.length > 2) {
      const filepath = `/${p.rest.slice(2).join('/')}`;
      const link = (await linksOfReleases(p.ctx.db, [release.id])).find((l) => l.filepath === filepath);
      const href = link ? linkHref(link.url) : null;
      if (!href) throw pageError(404);
      return redirect(p.reply, 'GET', href);
    }
    const evidence = p.rest.length === 3 && p.rest[1] === 'evidences' ? /^(\d{1,10})\.json$/.exec(p.rest[2]!) : null;
    if (evidence) {
      const found = (await evidencesOfReleases(p.ctx.db, [release.id])).find((e) => e.id === Number(evidence[1]));
      if (!found) throw pageError(404);
      return p.reply.code(200).type('application/json').header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff').send(found.summary);
    }
    throw pageError(404);
  });

  web.project('POST', 'releases', async (p) => {
    const tag = p.rest[0] ?? '';
    if (p.rest.length !== 2 || p.rest[1] !== 'edit' || tag.length > MAX_TAG) throw pageError(404);
    if (!p.project.can('read_release') || !p.project.can('download_code') || !p.project.can('update_release')) throw pageError(404);
    const release = await findRelease(p.ctx.db, p.project.project.id, tag);
    if (!release) throw pageError(404);
    const changes = changesOf(formOf(p));
    if (Array.isArray(changes)) return sendPage(p.reply, 400, editForm(p, release, changes));
    await updateRelease(p.ctx.db, release, changes);
    return redirect(p.reply, 'POST', releasePath(`/${encodePath(p.project.fullPath)}`, release.tag));
  });
};

export default releases;
