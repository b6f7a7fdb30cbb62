/**
 * Queues webhook deliveries for an event. Each hook that hears the event gets one background job
 * (WEB_HOOK_JOB, run by src/workers/web-hooks.worker.ts), inserted through the caller's handle: a
 * caller inside a transaction queues inside it, so the deliveries exist only once the event's
 * rows committed, and vanish with a rollback (the Service's run_after_commit before
 * WebHookService#async_execute).
 *
 * Other areas call `enqueueHookEvent(db, project, '<flag>', payload)` with the payload in the
 * Service's shape for that event (payloads.ts builds the common parts), e.g. wiki pages with
 * 'wiki_page_events' and deployments with 'deployment_events'.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';
import { insertJob } from '../background-jobs/background-jobs.queries.ts';
import { HOOK_NAMES, SYSTEM_HOOKS_TRIGGER } from './web-hook-logs.ts';
import { hooksHearing, type HookFlag } from './web-hooks.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const WEB_HOOK_JOB = 'web_hooks.deliver';
/** One run and 4 retries with back-off, as the Service's WebHookWorker (sidekiq retry: 4). */
export const WEB_HOOK_ATTEMPTS = 5;

/** The X-Gitlab-Event of each flag's deliveries (WebHookService.hook_to_event of its hook name). */
export const EVENT_HEADERS: Record<HookFlag, string> = {
  push_events: 'Push Hook',
  tag_push_events: 'Tag Push Hook',
  issues_events: 'Issue Hook',
  confidential_issues_events: 'Confidential Issue Hook',
  note_events: 'Note Hook',
  confidential_note_events: 'Confidential Note Hook',
  merge_requests_events: 'Merge Request Hook',
  job_events: 'Job Hook',
  pipeline_events: 'Pipeline Hook',
  wiki_page_events: 'Wiki Page Hook',
  deployment_events: 'Deployment Hook',
  releases_events: 'Release Hook',
  repository_update_events: 'Repository Update Hook',
};
/** Every delivery of a system hook says so, whatever the event (hook_to_event for a SystemHook). */
export const SYSTEM_HOOK_EVENT = 'System Hook';

/** What a delivery job carries: the hook is read again when it runs (it may have changed or gone). */
export interface DeliveryJob {
  hookId: number;
  event: string;
  /** The event's hook name for the delivery log (absent from jobs queued before it was kept). */
  trigger?: string;
  data: unknown;
}

/**
 * The Service's RefMatcher for push_events_branch_filter: an exact branch name, or a pattern in
 * which `*` stands for any run of characters (slashes too).
 */
export function branchFilterMatches(filter: string | null, branch: string): boolean {
  if (!filter) return true;
  if (!filter.includes('*')) return filter === branch;
  const pattern = filter.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*?');
  return new RegExp(`^${pattern}$`).test(branch);
}

/** ActiveHookFilter: a push reaches a hook only for a branch its filter matches. */
function hears(hook: WebHookRow, flag: HookFlag, data: unknown): boolean {
  if (flag !== 'push_events') return true;
  const ref = (data as { ref?: unknown }).ref;
  if (typeof ref !== 'string' || !ref.startsWith('refs/heads/')) return true;
  return branchFilterMatches(hook.push_events_branch_filter, ref.slice('refs/heads/'.length));
}

async function queue(db: Db, hooks: WebHookRow[], flag: HookFlag, event: string, trigger: string, data: unknown): Promise<number> {
  let queued = 0;
  for (const hook of hooks) {
    if (!hears(hook, flag, data)) continue;
    const job: DeliveryJob = { hookId: hook.id, event, trigger, data };
    await insertJob(db, { kind: WEB_HOOK_JOB, payload: job, maxAttempts: WEB_HOOK_ATTEMPTS });
    queued++;
  }
  return queued;
}

/** Queues the deliveries of a project event to the project's hooks that hear `flag`; returns how many. */
export async function enqueueHookEvent(db: Db, project: { id: number }, flag: HookFlag, data: unknown): Promise<number> {
  return queue(db, await hooksHearing(db, project.id, flag), flag, EVENT_HEADERS[flag], HOOK_NAMES[flag], data);
}

/**
 * Queues an event to the system hooks that hear `flag` (the Service's SystemHooksService: pushes,
 * tag pushes, merge requests and repository updates reach them).
 */
export async function enqueueSystemHookEvent(db: Db, flag: HookFlag, data: unknown): Promise<number> {
  return queue(db, await hooksHearing(db, null, flag), flag, SYSTEM_HOOK_EVENT, SYSTEM_HOOKS_TRIGGER, data);
}
