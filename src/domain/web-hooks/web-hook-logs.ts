/**
 * Webhook delivery logs (the Service's WebHookLog, written by WebHooks::LogExecutionService after
 * every request WebHookService makes): the trigger (the event's hook name), the hook's URL with
 * its credentials masked (SafeUrl), the request headers with the secret token redacted, the
 * request data, the answer's headers (the first 50, each value cut at 1 KiB), body (cut at
 * 8 KiB), status ("internal error" when no answer came), the execution time in seconds and the
 * error of a request that got no answer. Request data larger than REQUEST_DATA_LIMIT is stored
 * as {"oversize": true} (WebHookLog::OVERSIZE_REQUEST_DATA). Logs older than the Service's
 * retention (its monthly partitions kept for 3 months: 90 days) are pruned.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';
import { deleteWebHookLogsBefore, insertWebHookLog } from './web-hook-logs.queries.ts';
import type { HookFlag } from './web-hooks.queries.ts';

export const WEB_HOOK_LOG_RETENTION_DAYS = 90;
/** The largest request data kept as sent (the Service drops data its job queue would not carry). */
export const REQUEST_DATA_LIMIT = 1024 * 1024;
const RESPONSE_HEADERS_COUNT_LIMIT = 50;
const RESPONSE_HEADERS_SIZE_LIMIT = 1024;
const RESPONSE_BODY_SIZE_LIMIT = 8192;
/** WebHookService::InternalErrorResponse#code. */
export const INTERNAL_ERROR_STATUS = 'internal error';

/** The hook name (the trigger of the Service's WebHookService) of each event flag's deliveries. */
export const HOOK_NAMES: Record<HookFlag, string> = {
  push_events: 'push_hooks', tag_push_events: 'tag_push_hooks', issues_events: 'issue_hooks',
  confidential_issues_events: 'confidential_issue_hooks', note_events: 'note_hooks', confidential_note_events: 'confidential_note_hooks',
  merge_requests_events: 'merge_request_hooks', job_events: 'job_hooks', pipeline_events: 'pipeline_hooks',
  wiki_page_events: 'wiki_page_hooks', deployment_events: 'deployment_hooks', releases_events: 'release_hooks',
  repository_update_events: 'repository_update_hooks',
};
/** SystemHooksService runs every system hook delivery as `system_hooks`. */
export const SYSTEM_HOOKS_TRIGGER = 'system_hooks';

/** SafeUrl#safe_url: user and password of the URL masked. */
export function maskedUrl(text: string): string {
  try {
    const url = new URL(text);
    if (!url.username && !url.password) return text;
    if (url.username) url.username = '*****';
    if (url.password) url.password = '*****';
    return url.toString();
  } catch {
    return text;
  }
}

/** Cut at `limit` bytes without splitting a character (String#truncate_bytes). */
export function truncateBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** Net::HTTPHeader#each_capitalized: "content-type" as "Content-Type". */
function capitalized(name: string): string {
  return name.split('-').map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase()).join('-');
}

export interface DeliveryAttempt {
  trigger: string;
  /** The request headers as sent (credentials for HTTP Basic are not among them). */
  requestHeaders: Record<string, string>;
  data: unknown;
  /** The answer, or null when none came. */
  response: { status: number; headers: [string, string][]; body: string } | null;
  durationSeconds: number;
  error: string | null;
}

export async function logDeliveryAttempt(db: Kysely<DB>, hook: WebHookRow, attempt: DeliveryAttempt): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(attempt.requestHeaders)) {
    if (name.toLowerCase() === 'content-length') continue;
    headers[name] = name.toLowerCase() === 'x-gitlab-token' ? '[REDACTED]' : value;
  }
  const data = JSON.stringify(attempt.data ?? {});
  const responseHeaders: Record<string, string> = {};
  for (const [name, value] of (attempt.response?.headers ?? []).slice(0, RESPONSE_HEADERS_COUNT_LIMIT)) {
    responseHeaders[capitalized(name)] = truncateBytes(value, RESPONSE_HEADERS_SIZE_LIMIT);
  }
  const now = nowIso();
  await insertWebHookLog(db, {
    web_hook_id: hook.id, trigger: attempt.trigger, url: maskedUrl(hook.url), request_headers: JSON.stringify(headers),
    request_data: Buffer.byteLength(data) > REQUEST_DATA_LIMIT ? '{"oversize":true}' : data,
    response_headers: JSON.stringify(responseHeaders),
    response_body: truncateBytes(attempt.response?.body ?? '', RESPONSE_BODY_SIZE_LIMIT),
    response_status: attempt.response ? String(attempt.response.status) : INTERNAL_ERROR_STATUS,
    execution_duration: attempt.durationSeconds, internal_error_message: attempt.error, created_at: now, updated_at: now,
  });
}

/** Deletes the logs past the retention, in batches; returns how many went. */
export async function pruneWebHookLogs(db: Kysely<DB>, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - WEB_HOOK_LOG_RETENTION_DAYS * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const gone = await deleteWebHookLogsBefore(db, before, 1000);
    total += gone;
    if (gone < 1000) return total;
  }
}
