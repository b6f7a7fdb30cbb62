/**
 * What a merge request is made of, one tab each (issue 33): `/<iid>/commits` (its commits, newest
 * first), `/<iid>/pipelines` (its pipelines, for those who may read them: the API's GET
 * …/pipelines answers 403 to others) and `/<iid>/diffs`, the diff of its latest version file by
 * file — the API's (GET …/diffs: domain/merge-requests/mr-git.ts diffFiles, under the same
 * limits) drawn by the commit page's diff view (components/diff.ts).
 *
 * A large diff is never drawn whole: a page shows FILES_PER_PAGE files, and a file whose patch
 * passes a tenth of the instance's diff_max_patch_bytes is collapsed with a link that shows it
 * alone, as the Service collapses such patches (doc/administration/diff_limits.md: "Patches
 * greater than 10% of this size are automatically collapsed, and a link to expand the diff is
 * presented"); one past the limit itself is listed without its patch, with a link to the file.
 */
import { diffFiles, commitIdsBetween, type FileDiff } from '../../../domain/merge-requests/mr-git.ts';
import { EMPTY_TREE, rangeCommits, requestRange } from '../../../domain/merge-requests/request-range.ts';
import { pipelinesOfCommits } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { commitLine } from '../../components/commits.ts';
import { diffFileSection } from '../../components/diff.ts';
import { enc, pipelinePath, statusBadge, timeTag } from '../../ci-view.ts';
import { loadRequest, renderRequest } from './request-page.ts';

const COMMITS_PER_PAGE = 40;
const PIPELINES_PER_PAGE = 20;
/** Files drawn on one page of a diff (the Service loads a request's diff in batches too). */
export const FILES_PER_PAGE = 20;

export async function commitsPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const r = await loadRequest(p);
  const range = await requestRange(p.ctx.db, r.repo.gitDir, r.mr);
  const commits = range ? await rangeCommits(r.repo.gitDir, range.base, range.head) : [];
  const page = pageNumber(p.request);
  const shown = commits.slice((page - 1) * COMMITS_PER_PAGE, page * COMMITS_PER_PAGE);
  const base = `/${enc(p.project.fullPath)}`;
  return renderRequest(p, r, 'commits', html`<h2>${commits.length} commit${commits.length === 1 ? '' : 's'}</h2>
${shown.length === 0 ? html`<p class="muted" id="commits">No commits.</p>` : html`<ul class="list" id="commits">${shown.map((c) => html`<li>${commitLine(c, base)}</li>`)}</ul>`}
${pagination(`${r.path}/commits`, page, commits.length > page * COMMITS_PER_PAGE)}`);
}

export async function pipelinesPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const r = await loadRequest(p);
  // read_pipeline on the project: the API's GET …/merge_requests/:iid/pipelines answers 403 otherwise.
  if (!p.project.can('read_build')) throw pageError(403);
  const range = await requestRange(p.ctx.db, r.repo.gitDir, r.mr);
  const shas = range && range.base !== range.head ? await commitIdsBetween(r.repo.gitDir, range.base, range.head) : [];
  const page = pageNumber(p.request);
  const source = r.mr.source_project_id;
  const rows = source === null ? [] : await pipelinesOfCommits(p.ctx.db, source, r.mr.source_branch, r.mr.id, shas)
    .limit(PIPELINES_PER_PAGE + 1).offset((page - 1) * PIPELINES_PER_PAGE).execute();
  const shown = rows.slice(0, PIPELINES_PER_PAGE);
  const base = `/${enc(p.project.fullPath)}`;
  // A fork's pipelines live in the fork: linked only where they are this project's.
  const items = shown.map((pl) => {
    const own = pl.project_id === p.project.project.id;
    return html`<li class="pipeline-row" data-pipeline="${pl.id}">${statusBadge(pl.status)} ${own ? html`<a class="item-title" href="${pipelinePath(p.project.fullPath, pl.id)}">#${pl.id}</a>` : html`#${pl.id}`}
<code>${pl.ref}</code> · ${own ? html`<a href="${base}/-/commit/${pl.sha}"><code>${pl.sha.slice(0, 8)}</code></a>` : html`<code>${pl.sha.slice(0, 8)}</code>`}
<span class="muted">${pl.source} · ${timeTag(pl.created_at)}</span></li>`;
  });
  return renderRequest(p, r, 'pipelines', html`${items.length === 0 ? html`<p class="muted" id="pipelines">No pipelines to show.</p>`
    : html`<ul class="list" id="pipelines">${items}</ul>`}
${pagination(`${r.path}/pipelines`, page, rows.length > PIPELINES_PER_PAGE)}`);
}

const view = (d: FileDiff) => ({
  oldPath: d.old_path, newPath: d.new_path, newFile: d.new_file, deletedFile: d.deleted_file, renamedFile: d.renamed_file, diff: d.diff,
});

/** `?file=<n>`: one file of the diff, expanded; null when absent or not a file's index. */
function fileIndex(p: ProjectPageRequest, count: number): number | null {
  const raw = (p.request.query as Record<string, unknown>).file;
  if (typeof raw !== 'string' || !/^\d{1,4}$/.test(raw)) return null;
  const n = Number(raw);
  return n < count ? n : null;
}

export async function diffsPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const r = await loadRequest(p);
  const range = await requestRange(p.ctx.db, r.repo.gitDir, r.mr);
  const diff = range ? await diffFiles(r.repo.gitDir, range.base ?? EMPTY_TREE, range.head) : { files: [], overflow: false, realSize: '0' };
  const settings = await currentSettings(p.ctx.db);
  const collapseAt = Math.floor(settings.diff_max_patch_bytes / 10);
  const base = `/${enc(p.project.fullPath)}`;
  const head = range?.head ?? '';
  const files = diff.files;
  const single = fileIndex(p, files.length);
  const page = pageNumber(p.request);
  const first = single ?? (page - 1) * FILES_PER_PAGE;
  const shown = single !== null ? [files[single]!] : files.slice(first, first + FILES_PER_PAGE);
  const sections = shown.map((d, i) => {
    const index = first + i;
    const id = `diff-${index}`;
    if (d.too_large) {
      return diffFileSection(view(d), id, {
        collapsed: { href: `${base}/-/blob/${head}/${enc(d.new_path)}`, reason: 'This file is too large to show its changes here.' },
      });
    }
    const big = Buffer.byteLength(d.diff) > collapseAt;
    return diffFileSection(view(d), id, big && single === null
      ? { collapsed: { href: `${r.path}/diffs?file=${index}#${id}`, reason: 'This diff is collapsed: it is large.' } } : {});
  });
  const summary = html`<p id="diff-summary">${diff.realSize} changed file${diff.realSize === '1' ? '' : 's'}${
    shown.length > 0 && shown.length < files.length ? html`, showing ${single !== null ? `file ${single + 1}` : `files ${first + 1}–${first + shown.length}`} of ${files.length}` : ''}
<span class="diff-stats"><span class="additions">+${files.reduce((n, f) => n + f.additions, 0)}</span> <span class="deletions">−${files.reduce((n, f) => n + f.deletions, 0)}</span></span></p>
${diff.overflow ? html`<p class="alert" role="alert">Too many changes to show: only the first ${files.length} files are listed. Use git to see the whole diff.</p>` : ''}`;
  const fileList = shown.length > 1 ? html`<nav aria-label="Files on this page"><ul class="diff-files">${shown.map((d, i) =>
    html`<li><a href="#diff-${first + i}">${d.new_path}</a> <span class="additions">+${d.additions}</span> <span class="deletions">−${d.deletions}</span></li>`)}</ul></nav>` : '';
  const pager = single !== null ? html`<p><a href="${r.path}/diffs?page=${Math.floor(single / FILES_PER_PAGE) + 1}">Back to all files</a></p>`
    : pagination(`${r.path}/diffs`, page, files.length > page * FILES_PER_PAGE);
  return renderRequest(p, r, 'diffs', html`${summary}${fileList}
${files.length === 0 ? html`<p class="muted">No changes.</p>` : html`<div id="diffs">${sections}</div>`}
${pager}`);
}
