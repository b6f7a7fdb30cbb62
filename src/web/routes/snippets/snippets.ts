/**
 * Snippets (the web_url and raw_url of entities/snippet.ts, and the snippet note hook's URL):
 * a project's snippets at `/<project>/-/snippets[/:id]`, personal ones at `/-/snippets/:id`, each
 * with `/raw` (the first file, as GET …/snippets/:id/raw answers) and `/raw/:ref/*path` (one file
 * at a ref, as …/files/:ref/:file_path/raw). Who may read one is the API's decision: the project's
 * snippets feature, then ProjectSnippetPolicy (project-snippet.policy.ts); for a personal snippet
 * its visibility and author (snippet.policy.ts). Anything the viewer may not read is the 404 page.
 * A project snippet's comments follow it, each at the anchor of the note hook's `url`.
 */
import type { FastifyReply } from 'fastify';
import type { SnippetRow } from '../../../db/tables/snippets.ts';
import type { StorageShard } from '../../../config/schema.ts';
import { isStorableId } from '../../../db/constraints.ts';
import { findProjectSnippet, findSnippetById, projectSnippetsQuery, snippetAuthors } from '../../../domain/snippets/snippets.queries.ts';
import { canOnProjectSnippet } from '../../../domain/snippets/project-snippet.policy.ts';
import { canOnSnippet } from '../../../domain/snippets/snippet.policy.ts';
import { snippetFilePaths } from '../../../domain/snippets/snippet-actions.ts';
import { ACCESS_LEVELS, VISIBILITY_LEVELS, visibilityName } from '../../../domain/permissions/access.ts';
import { repositoryPath } from '../../../domain/repositories/storage.ts';
import { entryAt, readBlob, resolveCommit } from '../../../domain/repositories/git-read.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { INITIAL_BRANCH } from '../../../domain/repositories/repositories.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame } from '../../layout.ts';
import { pageError, type PageRequest, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { codeView, isBinary } from '../../components/code.ts';
import { markdownBlock } from '../../components/markdown.ts';
import { notesSection } from '../../components/notes.ts';
import { canReadInternalNotes } from '../../../domain/notes/note.policy.ts';
import { pageNumber, pagination, PER_PAGE } from '../../components/lists.ts';
import { timeTag } from '../../ci-view.ts';
import { encodePath } from '../repository/repository-page.ts';
import { MAX_PAGE_BLOB_BYTES, MAX_RAW_BYTES, sendRaw } from '../repository/files.ts';

const snippetGitDir = (storages: StorageShard[], s: SnippetRow) => repositoryPath(storages, s.repository_storage, s.disk_path);

/** A snippet id from the path: digits within the id range, else no snippet (the 404 page). */
function snippetId(segment: string | undefined): number | null {
  if (segment === undefined || !/^\d{1,10}$/.test(segment)) return null;
  const id = Number(segment);
  return isStorableId(id) ? id : null;
}

/** Each file of the snippet at its repository's tip, highlighted; a file too large or binary is linked raw. */
async function filesOf(storages: StorageShard[], s: SnippetRow, base: string): Promise<SafeHtml[]> {
  const gitDir = snippetGitDir(storages, s);
  const commit = await resolveCommit(gitDir, INITIAL_BRANCH);
  return Promise.all(snippetFilePaths(s).map(async (path) => {
    const raw = `${base}/raw/${INITIAL_BRANCH}/${encodePath(path)}`;
    const entry = commit ? await entryAt(gitDir, commit, path) : null;
    let content: SafeHtml;
    if (!commit && path === s.file_name) content = codeView(s.content, path);
    else if (!entry || entry.type !== 'blob') content = html`<p class="muted">This file is missing.</p>`;
    else if ((entry.size ?? 0) > MAX_PAGE_BLOB_BYTES) content = html`<p>The file is too large to show here. <a href="${raw}">View raw</a></p>`;
    else {
      const bytes = await readBlob(gitDir, entry.id, MAX_PAGE_BLOB_BYTES + 1);
      content = isBinary(bytes) ? html`<p>This file is binary. <a href="${raw}">Download it</a></p>` : codeView(bytes.toString('utf8'), path);
    }
    return html`<section class="snippet-file" aria-label="${path}"><div class="file-header"><span>${path}</span><span><a href="${raw}">Raw</a></span></div>
${content}</section>`;
  }));
}

async function snippetBody(p: PageRequest, markdown: MarkdownRenderer, s: SnippetRow, base: string): Promise<SafeHtml> {
  const author = (await snippetAuthors(p.ctx.db, [s])).get(s.author_id);
  return html`<div class="panel" id="snippet">
<p class="muted"><span class="badge">${visibilityName(s.visibility_level)}</span> $${s.id} · ${author
    ? html`by <a href="/${encodeURIComponent(author.username)}">${author.name}</a> · ` : ''}${timeTag(s.created_at)}</p>
${s.description ? await markdownBlock(markdown, s.description, p.ctx.config.externalUrl, 'snippet-description') : ''}
</div>
${await filesOf(p.ctx.config.storages, s, base)}`;
}

/** `/raw` (the first file as the API keeps it) or `/raw/:ref/*path` (a file at a ref); null for another sub-path. */
async function sendSnippetRaw(reply: FastifyReply, storages: StorageShard[], s: SnippetRow, rest: string[]): Promise<FastifyReply | null> {
  if (rest[0] !== 'raw') return null;
  if (rest.length === 1) return sendRaw(reply, s.content, s.file_name);
  const ref = rest[1]!;
  const path = normaliseFilePath(rest.slice(2).join('/'));
  const gitDir = snippetGitDir(storages, s);
  const commit = readableRevision(ref) ? await resolveCommit(gitDir, ref) : null;
  const entry = commit && path.ok && path.path !== '' ? await entryAt(gitDir, commit, path.path) : null;
  if (!entry || entry.type !== 'blob' || (entry.size ?? 0) > MAX_RAW_BYTES) throw pageError(404);
  return sendRaw(reply, await readBlob(gitDir, entry.id, MAX_RAW_BYTES), entry.name);
}

/** The project's snippet the viewer may read (its feature, then its own visibility), else the 404 page. */
async function projectSnippet(p: ProjectPageRequest, segment: string | undefined): Promise<SnippetRow> {
  const id = snippetId(segment);
  const s = id === null ? undefined : await findProjectSnippet(p.ctx.db, p.project.project.id, id);
  if (!s || !canOnProjectSnippet(p.project.actor, 'read_snippet', p.project.project, s)) throw pageError(404);
  return s;
}

async function projectList(p: ProjectPageRequest): Promise<SafeHtml> {
  const viewer = p.session?.user ?? null;
  // As GET /projects/:id/snippets (SnippetsFinder for one project): members and administrators
  // see every snippet; others the public ones (internal too unless external) and their own.
  const member = viewer?.admin === 1 || p.project.actor.accessLevel >= ACCESS_LEVELS.guest;
  const levels = !viewer ? [VISIBILITY_LEVELS.public]
    : viewer.external ? [VISIBILITY_LEVELS.public] : [VISIBILITY_LEVELS.public, VISIBILITY_LEVELS.internal];
  const page = pageNumber(p.request);
  const rows = await projectSnippetsQuery(p.ctx.db, p.project.project.id, member ? 'all' : { levels, authorId: viewer?.id ?? null })
    .orderBy('id', 'desc').limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const shown = rows.slice(0, PER_PAGE);
  const authors = await snippetAuthors(p.ctx.db, shown);
  const base = `/${encodePath(p.project.fullPath)}/-/snippets`;
  const items = shown.map((s) => {
    const author = authors.get(s.author_id);
    return html`<li><a class="item-title" href="${base}/${s.id}">${s.title}</a> <span class="badge">${visibilityName(s.visibility_level)}</span>
<div class="muted">$${s.id} · ${s.file_name}${author ? html` · by ${author.name}` : ''} · ${timeTag(s.created_at)}</div></li>`;
  });
  return p.render({
    title: 'Snippets', active: 'snippets',
    body: html`${items.length === 0 ? html`<p class="muted">No snippets to show.</p>` : html`<ul class="list" id="snippets">${items}</ul>`}
${pagination(base, page, rows.length > PER_PAGE)}`,
  });
}

const snippets: WebArea = (web) => {
  web.project('GET', 'snippets', async (p) => {
    if (!p.project.can('read_snippet')) throw pageError(404);
    if (p.rest.length === 0) return projectList(p);
    const s = await projectSnippet(p, p.rest[0]);
    const base = `/${encodePath(p.project.fullPath)}/-/snippets/${s.id}`;
    if (p.rest.length > 1) {
      const sent = await sendSnippetRaw(p.reply, p.ctx.config.storages, s, p.rest.slice(1));
      if (!sent) throw pageError(404);
      return sent;
    }
    return p.render({
      title: s.title, active: 'snippets',
      breadcrumbs: [{ text: p.project.project.name, href: `/${encodePath(p.project.fullPath)}` },
        { text: 'Snippets', href: `/${encodePath(p.project.fullPath)}/-/snippets` }],
      body: html`${await snippetBody(p, web.markdown, s, base)}
${p.project.can('read_note') ? await notesSection(p.ctx.db, web.markdown, p.ctx.config.externalUrl,
    { type: 'Snippet', id: s.id, commitId: null, projectId: p.project.project.id, iid: null }, canReadInternalNotes(p.project.actor)) : ''}`,
    });
  });

  // A personal snippet: its author and administrators, or anyone its visibility shows it to.
  const personal = async (p: PageRequest & { params: { id: string } }, rest: string[]) => {
    const id = snippetId(p.params.id);
    const s = id === null ? undefined : await findSnippetById(p.ctx.db, id);
    if (!s || s.project_id !== null || !canOnSnippet(p.session?.user ?? null, 'read_snippet', s)) throw pageError(404);
    if (rest.length > 0) {
      const sent = await sendSnippetRaw(p.reply, p.ctx.config.storages, s, rest);
      if (!sent) throw pageError(404);
      return sent;
    }
    return frame({ title: s.title, signedIn: p.signedIn, body: await snippetBody(p, web.markdown, s, `/-/snippets/${s.id}`) });
  };
  web.page('GET', '/-/snippets/:id', (p) => personal(p, []));
  web.page('GET', '/-/snippets/:id/raw', (p) => personal(p, ['raw']));
  web.page('GET', '/-/snippets/:id/raw/*', (p) => personal(p, ['raw', ...p.params['*'].split('/')]));
};

export default snippets;
