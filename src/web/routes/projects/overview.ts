/**
 * /:namespace/:project, the project's overview (the Service's ProjectsController#show): its name,
 * description and visibility, the clone URLs (HTTP and SSH, as the API's http_url_to_repo and
 * ssh_url_to_repo), the default branch's last commit with the status of its latest pipeline, the
 * repository's languages and its README rendered by the API's Markdown renderer (sanitised).
 * Code shows to those who may download it (download_code), the pipeline to those who may read
 * jobs (read_build); the rest of the page to every reader of the project.
 */
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import { entryAtRemembered, readBlob, readCommitRemembered, refTarget, type CommitInfo } from '../../../domain/repositories/git-read.ts';
import { cacheKey, remembered } from '../../../domain/repositories/repository-cache.ts';
import { validRefName } from '../../../domain/repositories/ref-names.ts';
import { repositoryLanguages } from '../../../domain/repositories/languages.ts';
import { newestPipelineAt } from '../../../domain/pipelines/pipeline-actions.queries.ts';
import { visibilityName } from '../../../domain/permissions/access.ts';
import { sshUrlToRepo } from '../../../http/entities/project.ts';
import { html, SafeHtml } from '../../html.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pathHref } from '../../components/lists.ts';
import { commitLine } from '../../components/commits.ts';
import { statusBadge } from '../../components/status.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';

/** READMEs larger than this are not rendered on the page; the file page shows them. */
export const MAX_README_BYTES = 512 * 1024;
const MARKDOWN_README = /\.(md|markdown|mdown|mkd|mkdn)$/i;

/**
 * The renderer's heading anchors are empty links hidden from assistive technology (the Service's
 * markup, which the API answers as it is); on a page they also leave the tab order, so that a
 * keyboard never lands on a link a screen reader does not announce (WCAG 4.1.2).
 */
export function keyboardSafe(rendered: string): string {
  return rendered.replaceAll(' aria-hidden="true"></a>', ' aria-hidden="true" tabindex="-1"></a>');
}

async function readmeSection(p: ProjectPageRequest, markdown: MarkdownRenderer, gitDir: string, commit: string): Promise<SafeHtml> {
  const branch = p.project.project.default_branch!;
  // The README the last push recorded (inspectRepository, as the API's readme_url names it):
  // one git process fewer than listing the root again (bench/web-pages.ts).
  const name = p.project.project.readme_path;
  if (!name) return html``;
  const entry = await entryAtRemembered(gitDir, commit, name);
  if (!entry || entry.type !== 'blob') return html``;
  const base = pathHref(p.project.fullPath);
  const link = `${base}/-/blob/${encodeURIComponent(branch)}/${encodeURIComponent(name)}`;
  const header = html`<div class="file-header"><a href="${link}">${name}</a></div>`;
  if ((entry.size ?? 0) > MAX_README_BYTES) {
    return html`<section id="readme">${header}<div class="panel"><p>The README is too large to show here. <a href="${link}">Open the file</a>.</p></div></section>`;
  }
  const ownHost = new URL(p.ctx.config.externalUrl).host;
  const isMarkdown = MARKDOWN_README.test(name);
  // The body depends on the blob's bytes, the host and the kind of file only: rendered once per
  // blob (repository-cache.ts), so a page for an unchanged README neither reads nor renders it.
  const body = await remembered(cacheKey('readme-html', entry.id, ownHost, isMarkdown ? 'markdown' : 'text'), async () => {
    const text = (await readBlob(gitDir, entry.id, MAX_README_BYTES + 1)).toString('utf8');
    // The renderer's output is sanitised HTML (domain/markdown/sanitize.ts): the one place kiln
    // puts generated markup into a page as it is.
    return (isMarkdown
      ? html`<div class="markdown">${new SafeHtml(keyboardSafe(await markdown.render(text, { gfm: true, ownHost })))}</div>`
      : html`<pre>${text}</pre>`).toString();
  });
  return html`<section id="readme">${header}<div class="panel">${new SafeHtml(body)}</div></section>`;
}

/**
 * The branch's last commit: its head read from the ref files on every request (ref-files.ts;
 * a push shows on the next page) and the commit by that id, kept once read, so a page for an
 * unchanged branch starts no git process (bench/web-pages.ts). Null when the branch names no
 * commit (a default branch that was never pushed), as for an empty repository.
 */
async function branchTip(gitDir: string, branch: string): Promise<CommitInfo | null> {
  if (!validRefName(branch)) return null;
  try {
    const head = await refTarget(gitDir, `refs/heads/${branch}`);
    return head ? await readCommitRemembered(gitDir, head) : null;
  } catch {
    return null;
  }
}

const overview: WebArea = (web) => {
  web.project('GET', '', async (p) => {
    const { project: row, fullPath } = p.project;
    const { externalUrl, sshPort } = p.ctx.config;
    const base = pathHref(fullPath);
    const parts: SafeHtml[] = [];
    const head = html`<p class="muted">${row.description ?? ''}</p>
<p><span class="badge">${visibilityName(row.visibility_level)}</span>${row.archived ? html` <span class="badge">archived</span>` : ''}</p>`;

    if (p.project.can('download_code')) {
      const httpUrl = `${externalUrl}/${fullPath}.git`;
      const sshUrl = sshUrlToRepo(externalUrl, sshPort, fullPath);
      parts.push(html`<section class="panel clone" aria-labelledby="clone-heading"><h2 id="clone-heading">Clone</h2>
<label for="clone-http">Clone with HTTP</label>
<input type="text" id="clone-http" value="${httpUrl}" readonly> <button type="button" data-copy="clone-http" hidden>Copy</button>
${sshPort !== 0 ? html`<label for="clone-ssh">Clone with SSH</label>
<input type="text" id="clone-ssh" value="${sshUrl}" readonly> <button type="button" data-copy="clone-ssh" hidden>Copy</button>` : ''}
</section>`);
      const gitDir = projectRepository(p.ctx.config.storages, row).gitDir;
      const branch = row.default_branch;
      const commit = branch && !row.empty_repo ? await branchTip(gitDir, branch) : null;
      if (!commit || !branch) {
        parts.push(html`<section class="panel" id="empty-repository"><h2>The repository is empty</h2>
<p>Push an existing repository:</p>
<pre>git remote add origin ${httpUrl}
git push -u origin --all</pre></section>`);
      } else {
        // The branch's newest pipeline at the commit just read (latest-pipeline.ts without resolving the branch again).
        const pipeline = p.project.can('read_build') ? await newestPipelineAt(p.ctx.db, row.id, branch, commit.id) : undefined;
        const status = pipeline
          ? (p.hasProjectPage('pipelines')
            ? html`<a href="${base}/-/pipelines/${pipeline.id}" aria-label="Pipeline ${pipeline.status}">${statusBadge(pipeline.status)}</a>`
            : statusBadge(pipeline.status))
          : '';
        const languages = await repositoryLanguages(gitDir, commit.id);
        parts.push(html`<section class="panel" id="last-commit" aria-label="Last commit">
<p class="muted">Default branch <code>${branch}</code></p>
${commitLine(commit, base, status)}
</section>`);
        if (languages.length > 0) {
          parts.push(html`<section class="panel" id="languages" aria-labelledby="languages-heading"><h2 id="languages-heading">Languages</h2>
<ul>${languages.map((l) => html`<li>${l.name} <span class="muted">${l.share.toFixed(1)} %</span></li>`)}</ul></section>`);
        }
        parts.push(await readmeSection(p, web.markdown, gitDir, commit.id));
      }
    }
    return p.render({ title: row.name, active: '', body: html`${head}${parts}`, scripts: ['copy.js'] });
  });
};

export default overview;
