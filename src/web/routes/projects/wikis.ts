/**
 * A project's wiki: `/-/wikis/:slug` (the wiki page hook's `url`, and `…/wikis/home`, the
 * `wiki.web_url` of every wiki hook), `/-/wikis/pages` (every page, as GET /projects/:id/wikis
 * lists them) and `/-/wikis` sending the browser to the home page, as the Service's wiki root does.
 * Reading takes read_wiki, as the API's wiki routes. A Markdown page goes through the API's
 * sanitising renderer (render_html=true); kiln has no RDoc, AsciiDoc or Org engine, so those are
 * shown as their text, as the API renders them (routes/projects/wikis.ts renderPage). A wiki with
 * no home page yet answers its empty state on `home` (the Service's wikis/empty page); any other
 * missing page is the 404 page.
 */
import { findPage, listPages, type WikiPage } from '../../../domain/wikis/wiki-pages.ts';
import { wikiRepository } from '../../../domain/wikis/wiki-repository.ts';
import { repositoryExists } from '../../../domain/repositories/repositories.ts';
import { pageText } from '../../../http/entities/wiki-page.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect } from '../../layout.ts';
import { pageError, type ProjectPageRequest, type WebArea } from '../../router.ts';
import { markdownBlock } from '../../components/markdown.ts';
import { encodePath } from '../repository/repository-page.ts';

/** Pages larger than this are not rendered into a page (the wiki's repository holds them whole). */
const MAX_RENDERED_BYTES = 1024 * 1024;
/** A slug's length, as a page's title and directories are bounded (wiki-pages.ts MAX_TITLE_BYTES + directories). */
const MAX_SLUG = 1024;
/** Pages listed on /-/wikis/pages. */
const MAX_LISTED = 2000;

async function gitDirOf(p: ProjectPageRequest): Promise<string | null> {
  const { gitDir } = wikiRepository(p.ctx.config.storages, p.project.project);
  return (await repositoryExists(gitDir)) ? gitDir : null;
}

const wikiBase = (p: ProjectPageRequest) => `/${encodePath(p.project.fullPath)}/-/wikis`;

function pagesList(p: ProjectPageRequest, pages: WikiPage[]): SafeHtml {
  const base = wikiBase(p);
  return html`<ul class="list" id="wiki-pages">${pages.slice(0, MAX_LISTED).map((w) => html`<li><a href="${base}/${encodePath(w.slug)}">${w.title}</a>${
    w.slug.includes('/') ? html` <span class="muted">${w.slug.slice(0, w.slug.lastIndexOf('/'))}</span>` : ''}</li>`)}</ul>`;
}

const wikis: WebArea = (web) => {
  web.project('GET', 'wikis', async (p) => {
    if (!p.project.can('read_wiki')) throw pageError(404);
    const base = wikiBase(p);
    if (p.rest.length === 0) return redirect(p.reply, 'GET', `${base}/home`);
    const gitDir = await gitDirOf(p);
    const crumbs = [{ text: p.project.project.name, href: `/${encodePath(p.project.fullPath)}` }, { text: 'Wiki', href: `${base}/home` }];
    if (p.rest.length === 1 && p.rest[0] === 'pages') {
      const pages = gitDir ? await listPages(gitDir, false) : [];
      return p.render({
        title: 'Wiki pages', active: 'wikis', breadcrumbs: crumbs,
        body: pages.length === 0 ? html`<p class="muted" id="wiki-pages">This wiki has no pages yet.</p>` : pagesList(p, pages),
      });
    }
    const slug = p.rest.join('/');
    if (slug.length > MAX_SLUG) throw pageError(404);
    const page = gitDir ? await findPage(gitDir, slug) : null;
    if (!page) {
      if (slug !== 'home') throw pageError(404);
      return p.render({
        title: 'Wiki', active: 'wikis', breadcrumbs: crumbs,
        body: html`<p class="muted" id="wiki-empty">This wiki has no home page yet.</p>
<p><a href="${base}/pages">All pages</a></p>`,
      });
    }
    const size = page.content?.length ?? 0;
    const { text } = pageText(page);
    const content = size > MAX_RENDERED_BYTES
      ? html`<p class="muted">This page is too large to show here (${size} bytes).</p>`
      : page.format === 'markdown' ? await markdownBlock(web.markdown, text, p.ctx.config.externalUrl, 'wiki-content')
        : html`<pre class="plain-readme" id="wiki-content">${text}</pre>`;
    return p.render({
      title: page.title, active: 'wikis', breadcrumbs: crumbs,
      body: html`<p class="muted"><a href="${base}/pages">All pages</a></p>
<div class="panel">${content}</div>`,
    });
  });
};

export default wikis;
