/**
 * /-/commits/:ref (a page of the ref's history, optionally of one path) and /-/commit/:sha (the
 * commit with its diff in one section per file). The diff is the API's (GET
 * /projects/:id/repository/commits/:sha/diff: domain/repositories/commit-diff.ts) under the same
 * instance limits (diff_max_files, diff_max_lines, diff_max_patch_bytes); a file past them is
 * listed without its patch, as the API answers it. Below the diff, the commit's comments oldest
 * first, each at its anchor `#note_<id>` (the note hook's url), for a viewer who reads notes, as
 * GET …/commits/:sha/comments shows them (internal ones to those who read internal notes).
 */
import { logPage, readCommit, resolveCommit } from '../../../domain/repositories/git-read.ts';
import { commitDiffs, type FileDiff } from '../../../domain/repositories/commit-diff.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type WebArea } from '../../router.ts';
import { canReadInternalNotes } from '../../../domain/notes/note.policy.ts';
import { notesSection } from '../../components/notes.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { commitLine, commitTitle, timeAgo } from '../../components/commits.ts';
import { encodePath, refAndPath, repositoryOf } from './repository-page.ts';
import { diffFileSection } from '../../components/diff.ts';

const COMMITS_PER_PAGE = 40;

/** One file of a diff, as a section (also the compare page's, compare.ts). */
export function fileSection(d: FileDiff, i: number): SafeHtml {
  return diffFileSection(d, `diff-${i}`);
}

const commits: WebArea = (web) => {
  web.project('GET', 'commits', async (p) => {
    const repo = repositoryOf(p);
    if (p.rest.length === 0) {
      const branch = p.project.project.default_branch;
      if (!branch) throw pageError(404);
      return p.reply.redirect(`${repo.base}/-/commits/${encodePath(branch)}`, 302);
    }
    const at = await refAndPath(repo.gitDir, p.rest);
    if (!at) throw pageError(404);
    const page = pageNumber(p.request);
    const query = { rev: at.commit, all: false, firstParent: false, topo: false, ...(at.path ? { path: at.path } : {}) };
    const list = await logPage(repo.gitDir, query, (page - 1) * COMMITS_PER_PAGE, COMMITS_PER_PAGE + 1);
    const self = `${repo.base}/-/commits/${encodePath(at.ref)}${at.path ? `/${encodePath(at.path)}` : ''}`;
    return p.render({
      title: `Commits · ${at.ref}`, active: 'commits',
      body: html`${at.path ? html`<p class="muted">Changes to <code>${at.path}</code></p>` : ''}
${list.length === 0 ? html`<p class="muted">No commits.</p>`
    : html`<ul class="list" id="commits">${list.slice(0, COMMITS_PER_PAGE).map((c) => html`<li>${commitLine(c, repo.base)}</li>`)}</ul>`}
${pagination(self, page, list.length > COMMITS_PER_PAGE)}`,
    });
  });

  web.project('GET', 'commit', async (p) => {
    const repo = repositoryOf(p);
    const sha = p.rest.join('/');
    const id = readableRevision(sha) ? await resolveCommit(repo.gitDir, sha) : null;
    const commit = id ? await readCommit(repo.gitDir, id) : null;
    if (!commit) throw pageError(404);
    const s = await currentSettings(p.ctx.db);
    const diffs = await commitDiffs(repo.gitDir, commit, {
      maxFiles: s.diff_max_files, maxLines: s.diff_max_lines, maxPatchBytes: s.diff_max_patch_bytes,
    });
    const body = commit.message.slice(commitTitle(commit).length).trim();
    return p.render({
      title: commitTitle(commit) || commit.id.slice(0, 8), active: 'commit',
      body: html`<div class="panel" id="commit">
<p><code>${commit.id}</code></p>
<p class="muted"><span>${commit.authorName}</span> authored ${timeAgo(commit.authoredDate)}${commit.committerName !== commit.authorName
    ? html` · committed by <span>${commit.committerName}</span>` : ''}</p>
${body ? html`<pre class="commit-message">${body}</pre>` : ''}
${commit.parentIds.length ? html`<p>Parent${commit.parentIds.length > 1 ? 's' : ''} ${commit.parentIds.map((parent) => html`<a href="${repo.base}/-/commit/${parent}"><code>${parent.slice(0, 8)}</code></a> `)}</p>` : ''}
</div>
<h2>${diffs.length} changed file${diffs.length === 1 ? '' : 's'}</h2>
<div id="diffs">${diffs.map(fileSection)}</div>
${p.project.can('read_note') ? await notesSection(p.ctx.db, web.markdown, p.ctx.config.externalUrl,
    { type: 'Commit', id: null, commitId: commit.id, projectId: p.project.project.id, iid: null }, canReadInternalNotes(p.project.actor)) : ''}`,
    });
  });
};

export default commits;
