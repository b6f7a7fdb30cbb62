/**
 * A file's blame: /-/blame/:ref/*path (issue 33 item 3; the Service's Projects::BlameController).
 * `git blame --porcelain` at the ref's commit, shown as runs of consecutive lines from one commit
 * (the commit's title, author and date once per run, as the Service groups them), the lines
 * highlighted as the blob page highlights them.
 *
 * Bounded as the blob page is: a file over the page's byte limit, a binary file, or one of more
 * lines than MAX_BLAME_LINES is not blamed (the page links to the raw file and the plain view
 * instead), and blame itself is cut off after BLAME_TIMEOUT_MS on a long history. Reading it
 * takes download_code, like every repository page (repository-page.ts).
 */
import { blame, entryAtRemembered, readBlob, readCommits, type BlameRange } from '../../../domain/repositories/git-read.ts';
import { GitOutputTooLarge, GitTimedOut } from '../../../domain/repositories/git-bytes.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type WebArea } from '../../router.ts';
import { highlightedLines, isBinary } from '../../components/code.ts';
import { commitTitle, timeAgo } from '../../components/commits.ts';
import { encodePath } from './repository-page.ts';
import { crumbs, locate, MAX_PAGE_BLOB_BYTES } from './files.ts';

/** Files with more lines than this are not blamed in a page. */
export const MAX_BLAME_LINES = 10_000;
/** A blame that runs longer than this is given up (the page says so). */
const BLAME_TIMEOUT_MS = 10_000;
/** Most porcelain output read: each line's header is well under 200 bytes past the line itself. */
const MAX_BLAME_OUTPUT = MAX_PAGE_BLOB_BYTES + MAX_BLAME_LINES * 512;

const countLines = (text: string) => (text === '' ? 0 : (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').length);

const blamePage: WebArea = (web) => {
  web.project('GET', 'blame', async (p) => {
    const { repo, at } = await locate(p);
    const entry = at.path === '' ? null : await entryAtRemembered(repo.gitDir, at.commit, at.path);
    if (!entry) throw pageError(404);
    const ref = encodePath(at.ref);
    if (entry.type !== 'blob') return p.reply.redirect(`${repo.base}/-/tree/${ref}/${encodePath(at.path)}`, 302);
    const blobHref = `${repo.base}/-/blob/${ref}/${encodePath(at.path)}`;
    const raw = `${repo.base}/-/raw/${ref}/${encodePath(at.path)}`;

    let content: SafeHtml | null = null;
    let text = '';
    if ((entry.size ?? 0) > MAX_PAGE_BLOB_BYTES) {
      content = html`<div class="panel" id="too-large"><p>The file is too large to blame here (${entry.size} bytes). <a href="${raw}">View raw</a></p></div>`;
    } else {
      const bytes = await readBlob(repo.gitDir, entry.id, MAX_PAGE_BLOB_BYTES + 1);
      if (isBinary(bytes)) {
        content = html`<div class="panel" id="binary"><p>This file is binary. <a href="${raw}">Download it</a></p></div>`;
      } else {
        text = bytes.toString('utf8');
        if (countLines(text) > MAX_BLAME_LINES) {
          content = html`<div class="panel" id="too-large"><p>The file has more than ${MAX_BLAME_LINES} lines to blame here. <a href="${blobHref}">View the file</a></p></div>`;
        }
      }
    }

    if (content === null) {
      let ranges: BlameRange[] | null;
      try {
        ranges = await blame(repo.gitDir, at.commit, at.path, { timeoutMs: BLAME_TIMEOUT_MS, maxBytes: MAX_BLAME_OUTPUT });
      } catch (err) {
        if (!(err instanceof GitTimedOut) && !(err instanceof GitOutputTooLarge)) throw err;
        ranges = null;
      }
      if (ranges === null) {
        content = html`<div class="panel" id="blame-timeout"><p>The blame of this file took too long to compute. <a href="${blobHref}">View the file</a></p></div>`;
      } else {
        const commits = await readCommits(repo.gitDir, ranges.map((r) => r.commitId));
        const lines = highlightedLines(text, entry.name);
        let line = 1;
        const runs = ranges.map((r) => {
          const c = commits.get(r.commitId);
          const first = line;
          line += r.lines.length;
          // Each number is a block of its own (kiln.css), so no newline follows it.
          const numbers = r.lines.map((_, i) => html`<a href="#L${first + i}" id="L${first + i}">${first + i}</a>`);
          const code = r.lines.map((_, i) => html`${lines[first + i - 1] ?? ''}\n`);
          return html`<tr class="blame-run"><td class="blame-commit">${c ? html`<a href="${repo.base}/-/commit/${c.id}">${commitTitle(c)}</a>
<div class="muted"><span>${c.authorName}</span> · ${timeAgo(c.authoredDate)}</div>` : html`<code>${r.commitId.slice(0, 8)}</code>`}</td>
<td class="ln"><pre>${numbers}</pre></td><td class="line"><pre><code class="hljs">${code}</code></pre></td></tr>`;
        });
        content = html`<div class="code blame"><table id="blame"><thead><tr><th scope="col"><span class="visually-hidden">Commit</span></th><th scope="col"><span class="visually-hidden">Line</span></th><th scope="col"><span class="visually-hidden">Code</span></th></tr></thead>
<tbody>${runs}</tbody></table></div>`;
      }
    }

    return p.render({
      title: `Blame · ${entry.name}`, active: 'blame',
      body: html`${crumbs(repo, at)}
<div class="file-header"><span>${entry.name} <span class="muted">${entry.size} bytes</span></span>
<span><a href="${blobHref}" id="normal-view-link">Normal view</a> · <a href="${raw}" id="raw-link">Raw</a></span></div>
${content}`,
    });
  });
};

export default blamePage;
