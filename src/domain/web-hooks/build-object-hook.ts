/** The build job of a record event (object-hooks.ts): the payload, then one delivery per hook. */
import { executeEventIntegrations } from '../integrations/push-integrations.ts';
import { enqueueHookEvent, enqueueSystemHookEvent } from './hook-events.ts';
import { buildObjectData, type ObjectDataEnv } from './object-payloads.ts';
import type { ObjectHookEvent } from './object-hooks.ts';

export async function buildObjectHook(env: ObjectDataEnv, event: ObjectHookEvent): Promise<void> {
  const built = await buildObjectData(env, event);
  if (!built) return;
  await enqueueHookEvent(env.db, { id: event.projectId }, built.flag, built.data);
  // Issue events reach the project's integrations too (Issues::BaseService#execute_hooks).
  if (built.flag === 'issues_events' || built.flag === 'confidential_issues_events') {
    await executeEventIntegrations(env.db, event.projectId, built.flag, built.data as Record<string, unknown>);
  }
  // Merge request events reach the system hooks too (SystemHooksService for merge_request_hooks).
  if (event.kind === 'merge_request') await enqueueSystemHookEvent(env.db, 'merge_requests_events', built.data);
}
