/**
 * Pieces the CI pages share (issue 33 item 4): a status as the Service's pages name it, a
 * duration, a time, and the addresses of a project's pipelines and jobs — the same paths as the
 * API's `web_url`s (http/entities/pipeline.ts, job.ts).
 */
import { html, type SafeHtml } from './html.ts';

/** The Service's pages say "passed" for success; every other status is shown by its name. */
const LABELS: Record<string, string> = { success: 'passed', waiting_for_resource: 'waiting', scheduled: 'delayed' };

export function statusLabel(status: string): string {
  return LABELS[status] ?? status;
}

export function statusBadge(status: string, o: { allowFailure?: boolean } = {}): SafeHtml {
  const shown = o.allowFailure && status === 'failed' ? 'warning' : status;
  return html`<span class="status status-${shown}">${o.allowFailure && status === 'failed' ? 'failed (allowed)' : statusLabel(status)}</span>`;
}

/** Whole seconds as `1h 2m 3s`, `2m 5s`, `7s`; nothing for an unknown duration. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return h > 0 ? `${h}h ${m}m ${r}s` : m > 0 ? `${m}m ${r}s` : `${r}s`;
}

/** Seconds between two ISO times, or from `start` until now while it runs. */
export function secondsBetween(start: string | null, end: string | null): number | null {
  if (!start) return null;
  const from = Date.parse(start), to = end ? Date.parse(end) : Date.now();
  return Number.isFinite(from) && Number.isFinite(to) ? Math.max(0, (to - from) / 1000) : null;
}

export function timeTag(iso: string | null): SafeHtml | string {
  if (!iso) return '';
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}</time>`;
}

export const enc = (value: string) => value.split('/').map(encodeURIComponent).join('/');

export const pipelinePath = (projectPath: string, id: number) => `/${enc(projectPath)}/-/pipelines/${id}`;
export const jobPath = (projectPath: string, id: number) => `/${enc(projectPath)}/-/jobs/${id}`;
