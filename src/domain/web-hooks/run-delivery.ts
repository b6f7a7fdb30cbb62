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
import type { DeliveryJob } from './hook-events.ts';

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

export async function executeHook(
  deps: DeliveryDeps, hook: WebHookRow, event: string, data: unknown, signal?: AbortSignal,
): Promise<DeliveryResult> {
  const token = hook.token_sealed ? (await deps.sealer()).open(hook.token_sealed) : null;
  return deliver({
    url: hook.url, event, data, token, signal,
    allowLocal: await hookMayReachLocal(deps.db, hook),
    verifyTls: hook.enable_ssl_verification === 1,
    instanceUrl: deps.externalUrl,
    userAgent: USER_AGENT,
  });
}

/** A refused address is final; a failed request or an error answer throws, so the job is retried with back-off. */
export async function runDeliveryJob(
  deps: DeliveryDeps, job: DeliveryJob, signal: AbortSignal,
): Promise<'delivered' | 'gone' | { blocked: string }> {
  const hook = await findHookById(deps.db, job.hookId);
  if (!hook) return 'gone';
  let result: DeliveryResult;
  try {
    result = await executeHook(deps, hook, job.event, job.data, signal);
  } catch (err) {
    if (err instanceof BlockedUrlError) return { blocked: err.message };
    throw err;
  }
  if (!result.ok) throw new Error(`hook ${hook.id} answered ${result.status}`);
  return 'delivered';
}
