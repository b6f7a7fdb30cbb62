/** The build job of a record event (object-hooks.ts): the payload, then one delivery per hook. */
import type { EventFlag } from '../integrations/catalog.ts';
import { executeEventIntegrations } from '../integrations/push-integrations.ts';
import { enqueueHookEvent, enqueueSystemHookEvent } from './hook-events.ts';
import { buildObjectData, type ObjectDataEnv } from './object-payloads.ts';
import type { ObjectHookEvent } from './object-hooks.ts';

const INTEGRATION_FLAGS = new Set<string>([
  'issues_events', 'confidential_issues_events', 'merge_requests_events', 'note_events', 'confidential_note_events', 'deployment_events',
]);

export async function buildObjectHook(env: ObjectDataEnv, event: ObjectHookEvent): Promise<void> {
  const built = await buildObjectData(env, event);
  if (!built) return;
  await enqueueHookEvent(env.db, { id: event.projectId }, built.flag, built.data);
  // Issue, merge request, comment and deployment events reach the project's integrations too
  // (Issues::BaseService and MergeRequests::BaseService#execute_hooks, Notes::PostProcessService
  // #execute_note_hooks, Deployment#execute_hooks).
  if (INTEGRATION_FLAGS.has(built.flag)) {
    await executeEventIntegrations(env.db, event.projectId, built.flag as EventFlag, built.data as Record<string, unknown>);
  }
  // Merge request events reach the system hooks too (SystemHooksService for merge_request_hooks).
  if (event.kind === 'merge_request') await enqueueSystemHookEvent(env.db, 'merge_requests_events', built.data);
}
