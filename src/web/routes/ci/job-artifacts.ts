/**
 * A job's artifacts in the browser (issue 33 item 4; the Service's Projects::ArtifactsController):
 * `/-/jobs/:id/artifacts/download` (the archive), `…/browse[/*path]` (a directory of the archive,
 * read from the zip's central directory only, at most MAX_LISTED entries), `…/file/*path` (one
 * file in a page, highlighted as the blob page does) and `…/raw/*path` (its bytes).
 *
 * Who may read them is who may read them through the API (http/routes/ci/job-artifacts.ts):
 * read_build, then the job's `artifacts:access` (domain/jobs/job-artifacts.ts
 * artifactsReadAbility). Whoever may not, and every job without live artifacts (none, expired,
 * erased), gets the same 404 page, as the Service's validate_artifacts! and access_denied! do.
 *
 * An entry's path is only ever compared with the archive's entry names (artifact-archive.ts),
 * never joined to a file system path. Raw bytes are never HTML the browser would run: plain text,
 * an image type or octets, with nosniff and a sandboxing policy, as the repository's raw files.
 */
import path from 'node:path';
import type { BuildRow } from '../../../db/tables/ci.ts';
import { findArtifact } from '../../../domain/jobs/jobs.queries.ts';
import { artifactsReadAbility, isLive } from '../../../domain/jobs/job-artifacts.ts';
import { fileSize, readStream } from '../../../domain/jobs/job-files.ts';
import { isPlainEntryPath, listArchiveDirectory, openArchiveEntry, readArchiveEntry } from '../../../domain/jobs/artifact-archive.ts';
import { html, type SafeHtml } from '../../html.ts';
import { pageError, type ProjectPageRequest } from '../../router.ts';
import { codeView, isBinary } from '../../components/code.ts';
import { enc, jobPath } from '../../ci-view.ts';
import { contentDisposition } from '../../../http/content-disposition.ts';

/** Most entries a directory page lists. */
export const MAX_LISTED = 1000;
/** Most entries of the archive's central directory read for one page. */
const MAX_SCANNED = 100_000;
/** Files larger than this are not shown in a page (the raw link serves them). */
const MAX_PAGE_FILE_BYTES = 1024 * 1024;

/** Types a raw entry keeps; anything else is sent as text (when it is) or as octets. */
const INLINE_IMAGES: Record<string, string> = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp',
};

/** Whether the viewer may read this job's artifacts (read_build is already checked by the jobs page). */
export function canReadArtifacts(p: ProjectPageRequest, job: BuildRow): boolean {
  const ability = artifactsReadAbility(job);
  return ability === null || (ability !== 'none' && p.project.can(ability));
}

/** The job's archive on disk, when it is live and the viewer may read it; the 404 page otherwise. */
async function archiveOf(p: ProjectPageRequest, job: BuildRow): Promise<{ file: string; filename: string; size: number }> {
  if (job.erased_at !== null || !canReadArtifacts(p, job)) throw pageError(404);
  const artifact = await findArtifact(p.ctx.db, job.id, 'archive');
  if (!isLive(artifact)) throw pageError(404);
  const file = path.join(p.ctx.config.dataDir, artifact.file_path);
  const size = await fileSize(file);
  if (size === null) throw pageError(404);
  return { file, filename: artifact.filename, size };
}

/** RFC 6266: a quoted ASCII fallback and the exact name in filename*. */
/** The entry path of the address's remaining segments: empty segments squeezed, as the Service's router does. */
function entryPathOf(segments: string[]): string {
  return segments.filter((s) => s !== '').join('/');
}

function crumbs(base: string, dir: string): SafeHtml {
  const parts = dir === '' ? [] : dir.split('/');
  return html`<nav class="breadcrumbs" aria-label="Path"><a href="${base}/browse">artifacts</a>${parts.map((name, i) => html` / <a href="${base}/browse/${enc(parts.slice(0, i + 1).join('/'))}">${name}</a>`)}</nav>`;
}

function renderJobPage(p: ProjectPageRequest, job: BuildRow, title: string, body: SafeHtml): SafeHtml {
  const projectBase = `/${enc(p.project.fullPath)}`;
  return p.render({
    title, active: 'jobs',
    breadcrumbs: [
      { text: p.project.project.name, href: projectBase }, { text: 'Jobs', href: `${projectBase}/-/jobs` },
      { text: `#${job.id}`, href: jobPath(p.project.fullPath, job.id) },
    ],
    body,
  });
}

async function browse(p: ProjectPageRequest, job: BuildRow, segments: string[]): Promise<SafeHtml> {
  const archive = await archiveOf(p, job);
  const dir = entryPathOf(segments);
  const listing = await listArchiveDirectory(archive.file, dir, MAX_LISTED, MAX_SCANNED);
  if (!listing.exists) throw pageError(404);
  const base = `${jobPath(p.project.fullPath, job.id)}/artifacts`;
  const rows = listing.entries.map((e) => html`<tr><td class="name"><a href="${base}/${e.directory ? 'browse' : 'file'}/${enc(e.path)}">${e.name}${e.directory ? '/' : ''}</a></td>
<td class="muted">${e.directory ? 'Directory' : 'File'}</td><td class="muted">${e.size === null ? '' : `${e.size} bytes`}</td></tr>`);
  return renderJobPage(p, job, dir === '' ? `Artifacts of job #${job.id}` : dir, html`${crumbs(base, dir)}
<p><a href="${base}/download" id="artifacts-download">Download artifacts archive</a> <span class="muted">(${archive.size} bytes)</span></p>
<table class="tree" id="artifacts"><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead>
<tbody>${rows}</tbody></table>${listing.entries.length === 0 ? html`<p class="muted">This directory is empty.</p>` : ''}
${listing.truncated ? html`<p class="muted" id="artifacts-truncated">Not every entry is listed here: download the archive to see them all.</p>` : ''}`);
}

async function filePage(p: ProjectPageRequest, job: BuildRow, segments: string[]): Promise<SafeHtml> {
  const archive = await archiveOf(p, job);
  const entryPath = entryPathOf(segments);
  if (!isPlainEntryPath(entryPath)) throw pageError(404);
  const entry = await openArchiveEntry(archive.file, entryPath);
  if (!entry) throw pageError(404);
  const size = entry.size;
  entry.stream.destroy();
  const base = `${jobPath(p.project.fullPath, job.id)}/artifacts`;
  const raw = `${base}/raw/${enc(entryPath)}`;
  const name = path.posix.basename(entryPath);
  let content: SafeHtml;
  const bytes = size > MAX_PAGE_FILE_BYTES ? null : await readArchiveEntry(archive.file, entryPath, MAX_PAGE_FILE_BYTES);
  if (bytes === null) {
    content = html`<div class="panel" id="too-large"><p>The file is too large to show here (${size} bytes). <a href="${raw}">View raw</a></p></div>`;
  } else if (isBinary(bytes)) {
    content = html`<div class="panel" id="binary"><p>This file is binary. <a href="${raw}">Download it</a></p></div>`;
  } else {
    content = codeView(bytes.toString('utf8'), name);
  }
  return renderJobPage(p, job, name, html`${crumbs(base, path.posix.dirname(entryPath) === '.' ? '' : path.posix.dirname(entryPath))}
<div class="file-header"><span>${name} <span class="muted">${size} bytes</span></span><span><a href="${raw}" id="raw-link">Raw</a></span></div>
${content}`);
}

async function rawEntry(p: ProjectPageRequest, job: BuildRow, segments: string[]) {
  const archive = await archiveOf(p, job);
  const entryPath = entryPathOf(segments);
  if (!isPlainEntryPath(entryPath)) throw pageError(404);
  const name = path.posix.basename(entryPath);
  const image = INLINE_IMAGES[path.posix.extname(name).toLowerCase()];
  let type = image;
  if (!type) {
    // Text or not is decided on the first bytes, as git decides it for the repository's raw files.
    const head = await readArchiveEntry(archive.file, entryPath, 8000);
    type = head !== null && !isBinary(head) ? 'text/plain; charset=utf-8' : 'application/octet-stream';
  }
  const entry = await openArchiveEntry(archive.file, entryPath);
  if (!entry) throw pageError(404);
  return p.reply.code(200)
    .type(type)
    .header('content-length', String(entry.size))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('content-disposition', contentDisposition(type === 'application/octet-stream' ? 'attachment' : 'inline', name))
    .header('cache-control', 'private, no-store')
    .send(entry.stream);
}

async function download(p: ProjectPageRequest, job: BuildRow) {
  const archive = await archiveOf(p, job);
  return p.reply.code(200)
    .type('application/octet-stream')
    .header('content-length', String(archive.size))
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', contentDisposition('attachment', archive.filename))
    .header('cache-control', 'private, no-store')
    .send(readStream(archive.file));
}

/**
 * `/-/jobs/:id/artifacts/<action>/…` for a job the viewer may see (`rest` is what follows the
 * job's id: `artifacts`, the action, the path's segments).
 */
export async function artifactsPage(p: ProjectPageRequest, job: BuildRow, rest: string[]) {
  const [action, ...segments] = rest.slice(1);
  if (action === 'download' && segments.length === 0) return download(p, job);
  if (action === 'browse') return browse(p, job, segments);
  if (action === 'file' && segments.length > 0) return filePage(p, job, segments);
  if (action === 'raw' && segments.length > 0) return rawEntry(p, job, segments);
  throw pageError(404);
}
