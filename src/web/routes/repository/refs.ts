/**
 * /-/branches and /-/tags: every branch (the default one first) and every tag (newest first), each
 * with the commit it names, read in one git process (listRefs, then readCommits for all tips).
 * /-/tags/:name is one tag (the release entity's tag_path and the chat messages' tag links): its
 * message, its commit and its release, as GET /projects/:id/repository/tags/:tag_name answers.
 */
import { listRefs, readCommits, type RefEntry } from '../../../domain/repositories/git-read.ts';
import { html } from '../../html.ts';
import { pageError, type WebArea } from '../../router.ts';
import { commitLine } from '../../components/commits.ts';
import { encodePath, repositoryOf } from './repository-page.ts';
import { validRefName } from '../../../domain/repositories/ref-names.ts';
import { findRelease } from '../../../domain/releases/releases.queries.ts';
import type { ProjectPageRequest } from '../../router.ts';

async function tagPage(p: ProjectPageRequest) {
  const repo = repositoryOf(p);
  const name = p.rest.join('/');
  const [tag] = validRefName(name) ? await listRefs(repo.gitDir, 'refs/tags/', name) : [];
  if (!tag) throw pageError(404);
  const commit = (await readCommits(repo.gitDir, [tag.commitId])).get(tag.commitId);
  const release = p.project.can('read_release') ? await findRelease(p.ctx.db, p.project.project.id, tag.name) : undefined;
  return p.render({
    title: tag.name, active: 'tags',
    breadcrumbs: [{ text: p.project.project.name, href: repo.base }, { text: 'Tags', href: `${repo.base}/-/tags` }],
    body: html`<div class="panel" id="tag">
${tag.tagMessage ? html`<pre class="commit-message">${tag.tagMessage}</pre>` : ''}
${commit ? commitLine(commit, repo.base) : ''}
<p><a href="${repo.base}/-/tree/${encodePath(tag.name)}">Browse files</a>${release
    ? html` · <a href="${repo.base}/-/releases/${encodeURIComponent(tag.name)}">Release ${release.name ?? tag.name}</a>` : ''}</p>
</div>`,
  });
}

/** Refs shown on one page; a repository with more lists the most recently updated. */
const MAX_REFS = 200;

const refs: WebArea = (web) => {
  for (const kind of ['branches', 'tags'] as const) {
    web.project('GET', kind, async (p) => {
      if (p.rest.length > 0) {
        if (kind === 'tags') return tagPage(p);
        throw pageError(404);
      }
      const repo = repositoryOf(p);
      const all: RefEntry[] = await listRefs(repo.gitDir, kind === 'branches' ? 'refs/heads/' : 'refs/tags/');
      const def = p.project.project.default_branch;
      const sorted = [...all].sort((a, b) => (kind === 'branches' ? Number(b.name === def) - Number(a.name === def) : 0)
        || (a.committedDate < b.committedDate ? 1 : a.committedDate > b.committedDate ? -1 : 0)).slice(0, MAX_REFS);
      const commits = await readCommits(repo.gitDir, [...new Set(sorted.map((r) => r.commitId))]);
      const items = sorted.map((r) => {
        const c = commits.get(r.commitId);
        const href = kind === 'tags' ? `${repo.base}/-/tags/${encodePath(r.name)}` : `${repo.base}/-/tree/${encodePath(r.name)}`;
        return html`<li><a class="item-title" href="${href}">${r.name}</a>${r.name === def && kind === 'branches'
          ? html` <span class="badge">default</span>` : ''}
${r.tagMessage ? html`<div class="muted">${r.tagMessage}</div>` : ''}
${c ? commitLine(c, repo.base) : ''}</li>`;
      });
      const title = kind === 'branches' ? 'Branches' : 'Tags';
      return p.render({
        title, active: kind,
        body: items.length === 0 ? html`<p class="muted" id="${kind}">No ${kind} yet.</p>` : html`<ul class="list" id="${kind}">${items}</ul>`,
      });
    });
  }
};

export default refs;
