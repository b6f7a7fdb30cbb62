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
 *
 * Those who may comment on the request start a thread on a line from here: each line's number
 * links to `?line_code=<file>_<old>_<new>`, which draws the one comment form under that line with
 * the Service's position (base/start/head sha, paths, old_line/new_line, position_type text);
 * actions.ts posts it through the API's diff note check (POST …/discussions with `position`).
 */
import { diffFiles, commitIdsBetween, type FileDiff } from '../../../domain/merge-requests/mr-git.ts';
import { EMPTY_TREE, rangeCommits, requestRange } from '../../../domain/merge-requests/request-range.ts';
import { pipelinesOfCommits } from '../../../domain/merge-requests/merge-requests.queries.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { commitLine } from '../../components/commits.ts';
import { diffFileSection, lineKey, numberedLines, type LineComments } from '../../components/diff.ts';
import { mergeRequestNoteable } from '../../../http/loaders/noteables.ts';
import { NOTE_MAX_LENGTH } from '../../../domain/notes/create-note.ts';
import { csrfInput } from './overview.ts';
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

/** `?line_code=<file>_<old>_<new>`: the file's index in the diff and the line's `<old>_<new>`; null when absent. */
function lineCodeOf(p: ProjectPageRequest): { file: number; key: string } | null {
  const raw = (p.request.query as Record<string, unknown>).line_code;
  if (raw === undefined) return null;
  // Anything else is no line of this diff: the 404 page, as a line that is not in it.
  const m = typeof raw === 'string' ? /^(\d{1,4})_(\d{1,7}_\d{1,7})$/.exec(raw) : null;
  if (!m) throw pageError(404);
  return { file: Number(m[1]), key: m[2]! };
}

/** The form of a new line comment: the position as hidden fields, as POST …/discussions takes it. */
function lineNoteForm(
  p: ProjectPageRequest, action: string, back: string,
  pos: { base: string; start: string; head: string; oldPath: string; newPath: string; oldLine: number | null; newLine: number | null },
): SafeHtml {
  const hidden = (name: string, value: string | number | null) => (value === null ? '' : html`<input type="hidden" name="${name}" value="${String(value)}">`);
  const where = pos.newLine !== null ? `line ${pos.newLine}` : `old line ${pos.oldLine ?? ''}`;
  return html`<form method="post" action="${action}" id="line-note-form" class="reply-form">${csrfInput(p)}${hidden('base_sha', pos.base)}${
    hidden('start_sha', pos.start)}${hidden('head_sha', pos.head)}${hidden('old_path', pos.oldPath)}${hidden('new_path', pos.newPath)}${
    hidden('old_line', pos.oldLine)}${hidden('new_line', pos.newLine)}
<label for="line-note-body">Comment on ${pos.newPath} ${where}</label><textarea id="line-note-body" name="note" rows="3" maxlength="${NOTE_MAX_LENGTH}" required></textarea>
<button type="submit" class="primary">Start a thread</button> <a href="${back}">Cancel</a></form>`;
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
  // Line comments: for whoever may comment, on a diff with a base commit (a position needs one).
  const nc = p.signedIn ? mergeRequestNoteable(p.ctx.db, p.ctx.config.storages, p.project, r.mr, r.subject) : null;
  const commenting = nc?.canComment === true && range !== null && range.base !== null;
  const lineCode = lineCodeOf(p);
  const query = single !== null ? `?file=${single}&` : page > 1 ? `?page=${page}&` : '?';
  const here = `${r.path}/diffs${query.slice(0, -1)}`;
  let opened = false;
  const comments = (d: FileDiff, index: number): LineComments | undefined => {
    if (!commenting) return undefined;
    // `#lc`, the form's row: a short fragment, as every line of the page carries it (issue 33's weight).
    const href = (key: string) => `${query}line_code=${index}_${key}#lc`;
    if (lineCode?.file !== index) return { href };
    const line = numberedLines(d.diff).find((l) => (l.oldLine !== null || l.newLine !== null) && lineKey(l) === lineCode.key);
    if (!line) return { href };
    opened = true;
    const refs = r.entity.diff_refs;
    const start = refs && refs.head_sha === range!.head && refs.start_sha ? refs.start_sha : range!.base!;
    return { href, open: { key: lineCode.key, form: lineNoteForm(p, `${r.path}/diff_note`, `${here}#diff-${index}`, {
      base: range!.base!, start, head: range!.head, oldPath: d.old_path, newPath: d.new_path, oldLine: line.oldLine, newLine: line.newLine,
    }) } };
  };
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
      ? { collapsed: { href: `${r.path}/diffs?file=${index}#${id}`, reason: 'This diff is collapsed: it is large.' } }
      : { comments: comments(d, index) });
  });
  // A line_code that names no line drawn here (another page's file, a line the diff no longer has).
  if (lineCode && commenting && !opened) throw pageError(404);
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
