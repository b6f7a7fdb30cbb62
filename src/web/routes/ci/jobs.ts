/**
 * A project's jobs (issue 33 item 4): `/-/jobs` (the API's scope filter), `/-/jobs/:id` — the job
 * and its log, streamed from disk through the ANSI renderer (web/job-log.ts) without reading it
 * whole, then followed live by web/assets/job-log.js through `/-/jobs/:id/trace.json` — the raw
 * log at `/-/jobs/:id/raw`, and retry, cancel, play and erase as the API's job actions decide
 * (http/routes/ci/job-actions.ts). Reading takes read_build, as GET /projects/:id/jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { isStorableId } from '../../../db/constraints.ts';
import { html, SafeHtml } from '../../html.ts';
import { CSRF_FIELD, redirect, sendPageParts } from '../../layout.ts';
import type { ProjectPageRequest, WebArea } from '../../router.ts';
import { pageError } from '../../router.ts';
import type { BuildRow } from '../../../db/tables/ci.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findJobInProject, jobArtifacts, projectJobsQuery } from '../../../domain/jobs/jobs.queries.ts';
import { cancelJob, eraseJob, isErasable, playJob, retryJob } from '../../../domain/jobs/job-actions.ts';
import { traceRelPath, fileSize } from '../../../domain/jobs/job-files.ts';
import { findUserBasicsByIds } from '../../../domain/users/users-batch.queries.ts';
import { LogRenderer } from '../../job-log.ts';
import { artifactsPage, canReadArtifacts } from './job-artifacts.ts';
import { enc, formatDuration, jobPath, pipelinePath, secondsBetween, statusBadge, timeTag } from '../../ci-view.ts';

const PER_PAGE = 30;
const MAX_PAGE = 10_000;
/**
 * The most of a log a page renders: the last 48 KiB of a longer one, from its first whole line,
 * with the raw log linked; the live view then follows the log from there. The Service's log view
 * cuts at 500 KiB (Gitlab::Ci::Trace::Stream LIMIT_SIZE), but rendered that is about 950 KB of
 * page, and issue 33 keeps a page (HTML, CSS and script) under 150 KB: 48 KiB of log renders to
 * about 95 KB (bench/web-pages.ts: 64 KiB made a 143 KB page). A 4 MiB log rendered whole cost
 * 170 ms of CPU and 8 MB of page.
 */
export const MAX_PAGE_LOG = 48 * 1024;
/** How far past the cut the first whole line is looked for (a longer line starts mid-line). */
const MAX_LINE_SEARCH = 64 * 1024;

/** The offset of the first line that starts at or after `from` (`from` itself when none is near). */
async function lineStart(file: string, from: number, end: number): Promise<number> {
  if (from === 0) return 0;
  const handle = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(MAX_LINE_SEARCH, end - from + 1));
    const { bytesRead } = await handle.read(buf, 0, buf.length, from - 1);
    const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
    return nl < 0 ? from : from - 1 + nl + 1;
  } finally {
    await handle.close();
  }
}
/** The most one poll of the live view reads. */
const MAX_POLL = 512 * 1024;
const SCOPES: Record<string, string[] | undefined> = {
  all: undefined, pending: ['pending'], running: ['running'], finished: ['success', 'failed', 'canceled', 'skipped'],
};
const ACTIVE = new Set(['created', 'waiting_for_resource', 'preparing', 'pending', 'running']);
const CANCELABLE = new Set(['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled', 'manual']);
const RETRYABLE = new Set(['failed', 'canceled', 'success']);
const SECTION_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** A place in a rendered page where streamed content goes (NUL never survives escaping or a template). */
class SafeHtmlMark {
  readonly html: SafeHtml;
  private readonly text: string;
  constructor(name: string) {
    this.text = `\u0000${name}\u0000`;
    this.html = new SafeHtml(this.text);
  }

  /** The page before this mark, between it and `next`, and after `next`. */
  split(page: string, next: SafeHtmlMark): [string, string, string] {
    const a = page.indexOf(this.text), b = page.indexOf(next.text);
    return [page.slice(0, a), page.slice(a + this.text.length, b), page.slice(b + next.text.length)];
  }
}

type Query = Record<string, string | undefined>;

function pageNumber(value: string | undefined): number {
  const n = value !== undefined && /^\d{1,6}$/.test(value) ? Number(value) : 1;
  return n >= 1 && n <= MAX_PAGE ? n : 1;
}

async function listPage(p: ProjectPageRequest): Promise<SafeHtml> {
  const q = p.request.query as Query;
  const scope = q.scope !== undefined && q.scope in SCOPES ? q.scope : 'all';
  const page = pageNumber(q.page);
  const rows = await projectJobsQuery(p.ctx.db, p.project.project.id, SCOPES[scope])
    .limit(PER_PAGE + 1).offset((page - 1) * PER_PAGE).execute();
  const jobs = rows.slice(0, PER_PAGE);
  const base = `/${enc(p.project.fullPath)}`;
  const url = (s: string, n?: number) => `${base}/-/jobs${s === 'all' && !n ? '' : `?${new URLSearchParams({ ...(s !== 'all' ? { scope: s } : {}), ...(n ? { page: String(n) } : {}) })}`}`;
  const tabs = Object.keys(SCOPES).map((s) => html`<a href="${url(s)}"${s === scope ? html` aria-current="page"` : ''}>${s[0]!.toUpperCase() + s.slice(1)}</a>`);
  const body = jobs.length === 0 ? html`<p class="muted">No jobs to show.</p>` : html`<table class="jobs">
<thead><tr><th scope="col">Status</th><th scope="col">Job</th><th scope="col">Pipeline</th><th scope="col" class="hide-narrow">Stage</th><th scope="col" class="hide-narrow">Duration</th><th scope="col" class="hide-narrow">Created</th></tr></thead>
<tbody>${jobs.map((j) => html`<tr><td>${statusBadge(j.status, { allowFailure: j.allow_failure === 1 })}</td>
<td><a href="${jobPath(p.project.fullPath, j.id)}">#${j.id} ${j.name}</a><div class="muted"><code>${j.ref}</code></div></td>
<td><a href="${pipelinePath(p.project.fullPath, j.pipeline_id)}">#${j.pipeline_id}</a></td>
<td class="hide-narrow">${j.stage}</td><td class="hide-narrow">${formatDuration(secondsBetween(j.started_at, j.finished_at))}</td><td class="hide-narrow">${timeTag(j.created_at)}</td></tr>`)}</tbody></table>`;
  return p.render({
    title: 'Jobs', active: 'jobs',
    body: html`<nav class="tabs" aria-label="Scopes">${tabs}</nav>${body}
<nav class="pagination" aria-label="Pages">${page > 1 ? html`<a href="${url(scope, page - 1)}">Previous</a>` : ''}${rows.length > PER_PAGE ? html`<a href="${url(scope, page + 1)}">Next</a>` : ''}</nav>`,
  });
}

async function loadJob(p: ProjectPageRequest): Promise<BuildRow> {
  const id = p.rest[0];
  // Digits beyond the id column's range name nothing (PostgreSQL refuses them as integers).
  if (id === undefined || !/^\d{1,10}$/.test(id) || !isStorableId(Number(id))) throw pageError(404);
  const job = await findJobInProject(p.ctx.db, p.project.project.id, Number(id));
  if (!job) throw pageError(404);
  return job;
}

function traceFile(p: ProjectPageRequest, job: BuildRow): string {
  return path.join(p.ctx.config.dataDir, traceRelPath(job));
}

/** The bytes of the log the runner has finished appending (trace_size), as on GET …/trace. */
async function logLength(p: ProjectPageRequest, job: BuildRow): Promise<number> {
  if (job.trace_size <= 0) return 0;
  const size = await fileSize(traceFile(p, job));
  return size === null ? 0 : Math.min(size, job.trace_size);
}

function actionButton(p: ProjectPageRequest, job: BuildRow, action: string, label: string, primary = false): SafeHtml {
  return html`<form class="inline" method="post" action="${jobPath(p.project.fullPath, job.id)}/${action}">
<input type="hidden" name="${CSRF_FIELD}" value="${p.signedIn?.csrfToken ?? ''}"><button type="submit"${primary ? html` class="primary"` : ''}>${label}</button></form>`;
}

function canErase(p: ProjectPageRequest, job: BuildRow): boolean {
  // erase_build: Maintainer (admin_build), or the Developer who started the job (http/routes/ci/job-actions.ts).
  return p.project.can('admin_build') || (p.project.can('update_build') && job.user_id === p.session?.user.id);
}

/**
 * The log's lines as HTML, read from disk in pieces: a running job's last line without its
 * newline waits for the live view; `consumed` is the byte offset the live view continues from.
 */
interface Rendered { consumed: number; nextLine: number; sections: string[] }

async function* renderLog(file: string, start: number, end: number, complete: boolean, out: Rendered) {
  const renderer = new LogRenderer();
  out.consumed = start;
  if (end > start) {
    let carry: Buffer = Buffer.alloc(0);
    for await (const chunk of fs.createReadStream(file, { start, end: end - 1, highWaterMark: 64 * 1024 })) {
      const buf = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : chunk as Buffer;
      // A newline byte never occurs inside a multi-byte UTF-8 character, so lines decode whole.
      const nl = buf.lastIndexOf(0x0a);
      if (nl < 0) {
        carry = buf;
        continue;
      }
      carry = buf.subarray(nl + 1);
      out.consumed += nl + 1;
      const text = renderer.push(buf.subarray(0, nl + 1).toString('utf8'));
      if (text) yield text;
    }
    if (complete && carry.length > 0) {
      renderer.push(carry.toString('utf8'));
      out.consumed += carry.length;
      yield renderer.end();
    }
  }
  out.nextLine = renderer.nextLine;
  out.sections = renderer.openSections;
}

async function showPage(p: ProjectPageRequest): Promise<ReturnType<typeof sendPageParts>> {
  const job = await loadJob(p);
  const base = `/${enc(p.project.fullPath)}`;
  const [user] = job.user_id === null ? [] : await findUserBasicsByIds(p.ctx.db, [job.user_id]);
  const artifacts = (await jobArtifacts(p.ctx.db, [job.id])).filter((a) => a.file_type === 'archive');
  const length = await logLength(p, job);
  const from = await lineStart(traceFile(p, job), Math.max(0, length - MAX_PAGE_LOG), length);
  const active = ACTIVE.has(job.status);
  const signedIn = p.signedIn !== null;
  const buttons: SafeHtml[] = [];
  if (signedIn && p.project.can('update_build')) {
    if (job.status === 'manual') buttons.push(actionButton(p, job, 'play', 'Run', true));
    if (CANCELABLE.has(job.status) && job.status !== 'manual') buttons.push(actionButton(p, job, 'cancel', 'Cancel'));
    if (RETRYABLE.has(job.status) && job.type === 'build') buttons.push(actionButton(p, job, 'retry', 'Retry', true));
  }
  if (signedIn && canErase(p, job) && !active && job.erased_at === null && (length > 0 || artifacts.length > 0)) {
    buttons.push(actionButton(p, job, 'erase', 'Erase log and artifacts'));
  }
  const header = html`<div class="panel job-header">${statusBadge(job.status, { allowFailure: job.allow_failure === 1 })}
<span>Job <strong>#${job.id} ${job.name}</strong> in stage <strong>${job.stage}</strong> of <a href="${pipelinePath(p.project.fullPath, job.pipeline_id)}">pipeline #${job.pipeline_id}</a>
for <code>${job.ref}</code></span>
<div class="muted">${user ? html`started by <a href="/${enc(user.username)}">${user.name}</a> · ` : ''}created ${timeTag(job.created_at)}${
  job.started_at ? html` · started ${timeTag(job.started_at)}` : ''}${job.finished_at ? html` · took ${formatDuration(secondsBetween(job.started_at, job.finished_at))}` : ''}${
  job.failure_reason ? html` · failure: ${job.failure_reason}` : ''}${job.coverage !== null ? html` · coverage ${job.coverage}%` : ''}</div>
${buttons.length > 0 ? html`<div class="actions">${buttons}</div>` : ''}
${artifacts.length > 0 && job.erased_at === null && canReadArtifacts(p, job) ? html`<p id="job-artifacts">Artifacts: <a href="${jobPath(p.project.fullPath, job.id)}/artifacts/download">download</a> · <a href="${jobPath(p.project.fullPath, job.id)}/artifacts/browse">browse</a>${
  job.artifacts_expire_at ? html` (expire ${timeTag(job.artifacts_expire_at)})` : ''}</p>` : ''}
</div>`;
  const out: Rendered = { consumed: 0, nextLine: 1, sections: [] };
  // The log and the live view's starting point are known only while the log streams: the page
  // is cut at two marks (NUL never occurs in rendered text) and sent in parts around them.
  const logMark = new SafeHtmlMark('log'), followMark = new SafeHtmlMark('follow');
  const pageHtml = p.render({
    title: `${job.name} (#${job.id})`, active: 'jobs', scripts: ['job-log.js'],
    breadcrumbs: [{ text: p.project.project.name, href: base }, { text: 'Jobs', href: `${base}/-/jobs` }],
    body: html`${header}
<div class="log-toolbar"><a href="${jobPath(p.project.fullPath, job.id)}/raw">Raw log</a>${from > 0 ? html` <span class="muted" id="log-cut">— showing the last ${Math.ceil((length - from) / 1024)} KiB of the log</span>` : ''}</div>
<pre class="job-log" id="job-log" aria-label="Job log" tabindex="0">${logMark.html}</pre>${followMark.html}
<p class="muted" id="log-state" aria-live="polite">${job.status === 'running' ? 'The job is running; its log follows here.' : active ? 'This job has not started yet.' : job.erased_at ? 'The log was erased.' : length === 0 ? 'This job has no log.' : ''}</p>`,
  }).value;
  const [before, middle, after] = logMark.split(pageHtml, followMark);
  const file = traceFile(p, job);
  async function* parts(): AsyncGenerator<string> {
    yield before;
    yield* renderLog(file, from, length, !active, out);
    yield middle;
    yield `<div id="log-follow" hidden data-url="${jobPath(p.project.fullPath, job.id)}/trace.json" data-offset="${out.consumed}" data-line="${out.nextLine}" data-sections="${out.sections.join(' ')}" data-active="${active ? '1' : '0'}"></div>`;
    yield after;
  }
  return sendPageParts(p.reply, 200, Readable.from(parts()));
}

/** The live view's poll: the lines written since `offset`, while the job runs and once after. */
async function tracePoll(p: ProjectPageRequest) {
  const job = await loadJob(p);
  const q = p.request.query as Query;
  const offset = q.offset !== undefined && /^\d{1,12}$/.test(q.offset) ? Number(q.offset) : 0;
  const line = q.line !== undefined && /^\d{1,9}$/.test(q.line) ? Number(q.line) : 1;
  const sections = (q.sections ?? '').split(' ').filter((s) => SECTION_NAME.test(s)).slice(0, 20);
  const length = await logLength(p, job);
  const complete = !ACTIVE.has(job.status);
  let html = '';
  let consumed = Math.min(offset, length);
  let nextLine = line;
  let open = sections;
  if (length > consumed) {
    const end = Math.min(length, consumed + MAX_POLL);
    const buf = Buffer.alloc(end - consumed);
    const fh = await fs.promises.open(traceFile(p, job), 'r');
    try {
      await fh.read(buf, 0, buf.length, consumed);
    } finally {
      await fh.close();
    }
    const last = end === length && complete ? buf.length - 1 : buf.lastIndexOf(0x0a);
    if (last >= 0) {
      const renderer = new LogRenderer(line, sections);
      html = renderer.push(buf.subarray(0, last + 1).toString('utf8'));
      if (end === length && complete) html += renderer.end();
      consumed += last + 1;
      nextLine = renderer.nextLine;
      open = renderer.openSections;
    }
  }
  return p.reply.code(200).type('application/json; charset=utf-8').header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(JSON.stringify({
      html, offset: consumed, line: nextLine, sections: open.join(' '), status: job.status, complete: complete && consumed >= length,
    }));
}

async function rawLog(p: ProjectPageRequest) {
  const job = await loadJob(p);
  const length = await logLength(p, job);
  p.reply.code(200).type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox").header('cache-control', 'no-store');
  if (length === 0) return p.reply.send('');
  return p.reply.send(fs.createReadStream(traceFile(p, job), { start: 0, end: length - 1 }));
}

async function act(p: ProjectPageRequest) {
  const action = p.rest[1];
  if (p.rest.length !== 2 || !action) throw pageError(404);
  const job = await loadJob(p);
  const env = ciEnvFrom(p.ctx.db, p.ctx.config);
  const userId = p.session!.user.id;
  if (!p.project.can('update_build')) throw pageError(403);
  let target = job.id;
  if (action === 'cancel') {
    await cancelJob(env, job);
  } else if (action === 'retry') {
    const r = await retryJob(env, job, userId);
    if (!r.ok) throw pageError(403);
    target = r.job.id;
  } else if (action === 'play') {
    const r = await playJob(env, job, userId, []);
    if (!r.ok) throw pageError(403);
    target = r.job.id;
  } else if (action === 'erase') {
    if (!canErase(p, job) || !await isErasable(env, job)) throw pageError(403);
    await eraseJob(env, job, userId);
  } else {
    throw pageError(404);
  }
  return redirect(p.reply, 'POST', jobPath(p.project.fullPath, target));
}

const jobs: WebArea = (web) => {
  web.project('GET', 'jobs', async (p) => {
    if (!p.project.can('read_build')) throw pageError(404);
    if (p.rest.length === 0) return listPage(p);
    if (p.rest.length === 1) return showPage(p);
    if (p.rest.length === 2 && p.rest[1] === 'trace.json') return tracePoll(p);
    if (p.rest.length === 2 && p.rest[1] === 'raw') return rawLog(p);
    if (p.rest.length >= 3 && p.rest[1] === 'artifacts') return artifactsPage(p, await loadJob(p), p.rest.slice(1));
    throw pageError(404);
  });
  web.project('POST', 'jobs', async (p) => {
    if (!p.project.can('read_build')) throw pageError(404);
    return act(p);
  });
};

export default jobs;
