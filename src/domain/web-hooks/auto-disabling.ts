/**
 * Auto-disabling of failing hooks (the Service's WebHook model and WebHooks::LogExecutionService,
 * 15.2). After every delivery attempt the hook's failure state moves with the answer's category
 * (WebHookService#response_category): a 2xx or 3xx answer clears it; a 500 answer or a request
 * that got no answer (an internal error) backs the hook off, disabled for 10 minutes, doubling
 * with each back-off in a row up to a day; any other answer (a 4xx, a 5xx other than 500) counts
 * one more failure in a row, and past 3 the hook is disabled until a success (a test delivery,
 * which always runs) clears it.
 *
 * In 15.2 only the hooks' executability and alert status are behind the `web_hooks_disable_failed`
 * feature flag, off by default (documented as introduced in 13.12 behind the flag, generally
 * available in 15.7): the state is kept either way, and a disabled hook is skipped only where the
 * flag is on (for a project hook, asked with its project as actor).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';
import { featureEnabled } from '../features/features.ts';
import { backOffHook, clearHookFailures, countHookFailure } from './web-hook-logs.queries.ts';

export const AUTO_DISABLE_FLAG = 'web_hooks_disable_failed';
/** WebHook::MAX_FAILURES, FAILURE_THRESHOLD, INITIAL_BACKOFF, MAX_BACKOFF, BACKOFF_GROWTH_FACTOR. */
export const MAX_FAILURES = 100;
export const FAILURE_THRESHOLD = 3;
const INITIAL_BACKOFF_S = 600;
const MAX_BACKOFF_S = 86_400;

export type ResponseCategory = 'ok' | 'error' | 'failed';

/** WebHookService#response_category: a status, or null when no answer came (an internal error). */
export function responseCategory(status: number | null): ResponseCategory {
  if (status === null || status === 500) return 'error';
  return status >= 200 && status < 400 ? 'ok' : 'failed';
}

/** WebHook#next_backoff in seconds. */
export function nextBackoffSeconds(backoffCount: number): number {
  if (backoffCount >= 8) return MAX_BACKOFF_S;
  return Math.min(Math.max(INITIAL_BACKOFF_S * 2 ** backoffCount, INITIAL_BACKOFF_S), MAX_BACKOFF_S);
}

export type AlertStatus = 'executable' | 'temporarily_disabled' | 'disabled';

type HookState = Pick<WebHookRow, 'recent_failures' | 'backoff_count' | 'disabled_until'>;

/** WebHook#alert_status with the flag's answer. */
export function alertStatus(hook: HookState, flagOn: boolean, now = new Date()): AlertStatus {
  if (!flagOn) return 'executable';
  if (hook.disabled_until !== null && Date.parse(hook.disabled_until) >= now.getTime()) return 'temporarily_disabled';
  if (hook.recent_failures > FAILURE_THRESHOLD) return 'disabled';
  return 'executable';
}

export async function autoDisablingOn(db: Kysely<DB>, hook: Pick<WebHookRow, 'project_id'>): Promise<boolean> {
  return featureEnabled(db, AUTO_DISABLE_FLAG, hook.project_id === null ? undefined : { kind: 'Project', id: hook.project_id });
}

/** WebHook#executable?. */
export async function hookExecutable(db: Kysely<DB>, hook: WebHookRow, now = new Date()): Promise<boolean> {
  return alertStatus(hook, await autoDisablingOn(db, hook), now) === 'executable';
}

/** LogExecutionService#update_hook_failure_state: enable!, backoff! or failed! by the answer's category. */
export async function recordHookOutcome(db: Kysely<DB>, hook: WebHookRow, category: ResponseCategory, now = new Date()): Promise<void> {
  if (category === 'ok') return clearHookFailures(db, hook.id);
  if (category === 'failed') return countHookFailure(db, hook.id, MAX_FAILURES);
  const flagOn = await autoDisablingOn(db, hook);
  const status = alertStatus(hook, flagOn, now);
  // A permanently disabled hook, or one at the most back-offs still disabled, stays as it is.
  if (status === 'disabled' || (hook.backoff_count >= MAX_FAILURES && status === 'temporarily_disabled')) return;
  const until = new Date(now.getTime() + nextBackoffSeconds(hook.backoff_count) * 1000).toISOString();
  await backOffHook(db, hook.id, hook.backoff_count, Math.min(hook.backoff_count + 1, MAX_FAILURES), until);
}
