/**
 * Runs one queued delivery (the Service's WebHookWorker → WebHookService#execute), and the
 * synchronous test deliveries of POST …/hooks/:hook_id/test/:trigger and POST /hooks/:id.
 * Whether a hook may reach a local address is read at delivery time, so changing the setting
 * applies to deliveries already queued.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';
import { SERVICE_VERSION } from '../../version.ts';
import { currentSettings } from '../settings/settings.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import { deliver, type DeliveryResult } from './delivery.ts';
import { findHookById } from './web-hooks.queries.ts';
import { BlockedUrlError } from './url-policy.ts';
import { EVENT_HEADERS, type DeliveryJob } from './hook-events.ts';
import { hookExecutable, recordHookOutcome, responseCategory, type ResponseCategory } from './auto-disabling.ts';
import { HOOK_NAMES, SYSTEM_HOOKS_TRIGGER, logDeliveryAttempt, type DeliveryAttempt } from './web-hook-logs.ts';
import type { HookFlag } from './web-hooks.queries.ts';

/** The hook name of a job queued before jobs carried it, from its X-Gitlab-Event. */
function triggerOfEvent(event: string): string {
  const flag = (Object.keys(EVENT_HEADERS) as HookFlag[]).find((f) => EVENT_HEADERS[f] === event);
  return flag ? HOOK_NAMES[flag] : SYSTEM_HOOKS_TRIGGER;
}

export interface DeliveryDeps {
  db: Kysely<DB>;
  sealer: () => Promise<Sealer>;
  externalUrl: string;
}

export const USER_AGENT = `kiln/${SERVICE_VERSION}`;

/** allow_local_requests_from_system_hooks for system hooks, …_web_hooks_and_services otherwise. */
export async function hookMayReachLocal(db: Kysely<DB>, hook: Pick<WebHookRow, 'type'>): Promise<boolean> {
  const settings = await currentSettings(db);
  return hook.type === 'SystemHook'
    ? settings.allow_local_requests_from_system_hooks
    : settings.allow_local_requests_from_web_hooks_and_services;
}

export interface ExecuteOptions {
  /** The event's hook name, recorded in the delivery log (push_hooks, system_hooks, …). */
  trigger: string;
  signal?: AbortSignal;
}

/**
 * One request to a hook, recorded in web_hook_logs with its outcome moving the hook's failure
 * state (web-hook-logs.ts, auto-disabling.ts). A request cut short by the process stopping is
 * neither: the job runs again elsewhere. Recording never fails the delivery.
 */
export async function executeHook(
  deps: DeliveryDeps, hook: WebHookRow, event: string, data: unknown, opts: ExecuteOptions,
): Promise<DeliveryResult> {
  const token = hook.token_sealed ? (await deps.sealer()).open(hook.token_sealed) : null;
  let sent: Record<string, string> = {};
  const started = performance.now();
  const record = async (attempt: Pick<DeliveryAttempt, 'response' | 'error'>, category: ResponseCategory) => {
    if (opts.signal?.aborted) return;
    const durationSeconds = (performance.now() - started) / 1000;
    try {
      await logDeliveryAttempt(deps.db, hook, { trigger: opts.trigger, requestHeaders: sent, data, durationSeconds, ...attempt });
      await recordHookOutcome(deps.db, hook, category);
    } catch {
      // The Service rescues failures of its log and state updates too (LogExecutionService).
    }
  };
  let result: DeliveryResult;
  try {
    result = await deliver({
      url: hook.url, event, data, token, signal: opts.signal,
      allowLocal: await hookMayReachLocal(deps.db, hook),
      verifyTls: hook.enable_ssl_verification === 1,
      instanceUrl: deps.externalUrl,
      userAgent: USER_AGENT,
      onRequest: (headers) => { sent = headers; },
    });
  } catch (err) {
    await record({ response: null, error: err instanceof Error ? err.message : String(err) }, responseCategory(null));
    throw err;
  }
  const response = { status: result.status, headers: result.headers, body: result.body };
  await record({ response, error: null }, responseCategory(result.status));
  return result;
}

/**
 * A refused address is final; a failed request or an error answer throws, so the job is retried
 * with back-off. A hook disabled for its failures (where web_hooks_disable_failed is on) is
 * skipped, retries included (WebHookService#execute answers "Hook disabled").
 */
export async function runDeliveryJob(
  deps: DeliveryDeps, job: DeliveryJob, signal: AbortSignal,
): Promise<'delivered' | 'gone' | 'disabled' | { blocked: string }> {
  const hook = await findHookById(deps.db, job.hookId);
  if (!hook) return 'gone';
  if (!(await hookExecutable(deps.db, hook))) return 'disabled';
  let result: DeliveryResult;
  try {
    result = await executeHook(deps, hook, job.event, job.data, { trigger: job.trigger ?? triggerOfEvent(job.event), signal });
  } catch (err) {
    if (err instanceof BlockedUrlError) return { blocked: err.message };
    throw err;
  }
  if (!result.ok) throw new Error(`hook ${hook.id} answered ${result.status}`);
  return 'delivered';
}
