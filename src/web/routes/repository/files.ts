/**
 * The repository's files: /-/tree/:ref/*path (a directory), /-/blob/:ref/*path (a file, syntax
 * highlighted on the server) and /-/raw/:ref/*path (the file's bytes). Files past the page's
 * limit, and binary files, are not put into the page: it links to the raw file instead, as the
 * Service's blob viewer does for large files. The raw answer is plain text or octets, never HTML
 * the browser would run (nosniff, and a sandboxing policy for any browser that renders it).
 */
import type { FastifyReply } from 'fastify';
import { entryAtRemembered, listTreeRemembered, readBlob, type TreeEntry } from '../../../domain/repositories/git-read.ts';
import { html, SafeHtml } from '../../html.ts';
import { cacheKey, remembered } from '../../../domain/repositories/repository-cache.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { lastCommitsForEntries, type LastCommit } from '../../../domain/repositories/last-commits.ts';
import { codeView, isBinary } from '../../components/code.ts';
import { timeAgo } from '../../components/commits.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { encodePath, refAndPath, repositoryOf, type RefAndPath, type RepositoryPage } from './repository-page.ts';

/** Files larger than this are not shown in a page (the raw link serves them). */
export const MAX_PAGE_BLOB_BYTES = 1024 * 1024;
/**
 * Entries of a directory a tree page shows, each with its last commit: the Service's tree shows
 * 1,000 entries (TREE_PAGE_LIMIT of its repository browser) before offering more; here the next
 * ones are the next page (`?page=`), whose last commits are computed when it is asked for.
 */
export const TREE_PAGE_ENTRIES = 1000;
/** The largest file /-/raw serves (the API's own limit for a file's content, routes/repository/files.ts). */
export const MAX_RAW_BYTES = 25 * 1024 * 1024;

export function crumbs(repo: RepositoryPage, at: RefAndPath): SafeHtml {
  const parts = at.path === '' ? [] : at.path.split('/');
  const root = `${repo.base}/-/tree/${encodePath(at.ref)}`;
  return html`<nav class="breadcrumbs" aria-label="Path"><code>${at.ref}</code> · <a href="${root}">${'/'}</a>${parts.map((name, i) => {
    const href = `${root}/${encodePath(parts.slice(0, i + 1).join('/'))}`;
    return html` <a href="${href}">${name}</a>${i < parts.length - 1 ? ' /' : ''}`;
  })}</nav>`;
}

export async function locate(p: ProjectPageRequest): Promise<{ repo: RepositoryPage; at: RefAndPath }> {
  const repo = repositoryOf(p);
  const at = await refAndPath(repo.gitDir, p.rest);
  if (!at) throw pageError(404);
  return { repo, at };
}

function sortEntries(entries: TreeEntry[]): TreeEntry[] {
  const rank = (e: TreeEntry) => (e.type === 'tree' ? 0 : e.type === 'commit' ? 1 : 2);
  return [...entries].sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function lastCommitCell(repo: RepositoryPage, c: LastCommit | undefined): SafeHtml | string {
  if (!c) return '';
  return html`<a href="${repo.base}/-/commit/${c.id}">${c.title}</a> <span class="muted">${timeAgo(c.committedDate)}</span>`;
}

/** A file's bytes as text or octets, never as a page (also the snippets' raw files, snippets/snippets.ts). */
export function sendRaw(reply: FastifyReply, bytes: Buffer | string, name: string): FastifyReply {
  return reply.code(200)
    .type(typeof bytes !== 'string' && isBinary(bytes) ? 'application/octet-stream' : 'text/plain; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('content-disposition', `inline; filename*=UTF-8''${encodeURIComponent(name)}`)
    .header('cache-control', 'private, no-store')
    .send(bytes);
}

const files: WebArea = (web) => {
  web.project('GET', 'tree', async (p) => {
    if (p.rest.length === 0) {
      const branch = p.project.project.default_branch;
      if (!branch) throw pageError(404);
      return p.reply.redirect(`${repositoryOf(p).base}/-/tree/${encodePath(branch)}`, 302);
    }
    const { repo, at } = await locate(p);
    if (at.path !== '') {
      const entry = await entryAtRemembered(repo.gitDir, at.commit, at.path);
      if (!entry) throw pageError(404);
      if (entry.type === 'blob') return p.reply.redirect(`${repo.base}/-/blob/${encodePath(at.ref)}/${encodePath(at.path)}`, 302);
    }
    const entries = sortEntries(await listTreeRemembered(repo.gitDir, at.commit, at.path, false));
    const ref = encodePath(at.ref);
    const page = pageNumber(p.request);
    const shown = entries.slice((page - 1) * TREE_PAGE_ENTRIES, page * TREE_PAGE_ENTRIES);
    if (page > 1 && shown.length === 0) throw pageError(404);
    const last = await lastCommitsForEntries(repo.gitDir, at.commit, at.path, shown.map((e) => e.path));
    const rows = shown.map((e) => {
      const href = e.type === 'tree' ? `${repo.base}/-/tree/${ref}/${encodePath(e.path)}`
        : e.type === 'blob' ? `${repo.base}/-/blob/${ref}/${encodePath(e.path)}` : null;
      const kind = e.type === 'tree' ? 'Directory' : e.type === 'commit' ? 'Submodule' : 'File';
      return html`<tr><td class="name">${href ? html`<a href="${href}">${e.name}${e.type === 'tree' ? '/' : ''}</a>` : e.name}</td>
<td class="muted">${kind}</td><td class="muted">${e.size === null ? '' : `${e.size} bytes`}</td>
<td class="last-commit hide-narrow">${lastCommitCell(repo, last.get(e.path))}</td></tr>`;
    });
    return p.render({
      title: at.path === '' ? `Files · ${p.project.project.name}` : at.path, active: 'tree',
      body: html`${crumbs(repo, at)}
<table class="tree" id="tree"><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col" class="hide-narrow">Last commit</th></tr></thead>
<tbody>${rows}</tbody></table>${entries.length === 0 ? html`<p class="muted">This directory is empty.</p>` : ''}
${entries.length > TREE_PAGE_ENTRIES ? html`<p class="muted" id="tree-range">Entries ${(page - 1) * TREE_PAGE_ENTRIES + 1}–${(page - 1) * TREE_PAGE_ENTRIES + shown.length} of ${entries.length}</p>` : ''}
${pagination(`${repo.base}/-/tree/${ref}${at.path === '' ? '' : `/${encodePath(at.path)}`}`, page, page * TREE_PAGE_ENTRIES < entries.length)}`,
    });
  });

  web.project('GET', 'blob', async (p) => {
    const { repo, at } = await locate(p);
    const entry = at.path === '' ? null : await entryAtRemembered(repo.gitDir, at.commit, at.path);
    if (!entry) throw pageError(404);
    if (entry.type !== 'blob') return p.reply.redirect(`${repo.base}/-/tree/${encodePath(at.ref)}/${encodePath(at.path)}`, 302);
    const raw = `${repo.base}/-/raw/${encodePath(at.ref)}/${encodePath(at.path)}`;
    let content: SafeHtml;
    if ((entry.size ?? 0) > MAX_PAGE_BLOB_BYTES) {
      content = html`<div class="panel" id="too-large"><p>The file is too large to show here (${entry.size} bytes). <a href="${raw}">View raw</a></p></div>`;
    } else {
      // Highlighted once per blob and name (the name picks the language), null for a binary file:
      // a page for an unchanged file neither reads nor highlights it again (repository-cache.ts).
      const view = await remembered(cacheKey('code-view', entry.id, entry.name), async () => {
        const bytes = await readBlob(repo.gitDir, entry.id, MAX_PAGE_BLOB_BYTES + 1);
        return isBinary(bytes) ? null : codeView(bytes.toString('utf8'), entry.name).toString();
      });
      content = view === null
        ? html`<div class="panel" id="binary"><p>This file is binary. <a href="${raw}">Download it</a></p></div>`
        : new SafeHtml(view);
    }
    return p.render({
      title: entry.name, active: 'blob',
      body: html`${crumbs(repo, at)}
<div class="file-header"><span>${entry.name} <span class="muted">${entry.size} bytes</span></span>
<span><a href="${repo.base}/-/blame/${encodePath(at.ref)}/${encodePath(at.path)}" id="blame-link">Blame</a> · <a href="${raw}" id="raw-link">Raw</a></span></div>
${content}`,
    });
  });

  web.project('GET', 'raw', async (p) => {
    const { repo, at } = await locate(p);
    const entry = at.path === '' ? null : await entryAtRemembered(repo.gitDir, at.commit, at.path);
    if (!entry || entry.type !== 'blob') throw pageError(404);
    if ((entry.size ?? 0) > MAX_RAW_BYTES) throw pageError(404);
    return sendRaw(p.reply, await readBlob(repo.gitDir, entry.id, MAX_RAW_BYTES), entry.name);
  });
};

export default files;
