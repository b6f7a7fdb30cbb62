/**
 * Creating and changing hooks: the URL is checked as the Service's PublicUrlValidator does when
 * a hook is saved (url-policy.ts; local addresses only where the instance allows them), the
 * branch filter must be a valid branch name once its wildcards are filled in
 * (BranchFilterValidator), and the token is sealed (never returned).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookRow } from '../../db/tables/web-hooks.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import { isValidRefName } from '../repositories/ref-name.ts';
import { currentSettings } from '../settings/settings.ts';
import { urlProblem } from './url-policy.ts';
import { insertHook, updateHook, type HookFlag, type HookWrite } from './web-hooks.queries.ts';

export interface HookInput {
  url?: string;
  token?: string;
  enable_ssl_verification?: boolean;
  push_events_branch_filter?: string;
  flags: Partial<Record<HookFlag, boolean>>;
}

export type SaveResult =
  | { ok: true; row: WebHookRow }
  | { ok: false; field: 'url' | 'push_events_branch_filter'; message: string };

function branchFilterValid(filter: string): boolean {
  return filter === '' || isValidRefName(filter.replaceAll('*', 'x'));
}

/** Saves a new hook (`existing` null) of a project (`projectId`) or of the instance (null). */
export async function saveHook(
  db: Kysely<DB>, sealer: Sealer, projectId: number | null, existing: WebHookRow | null, input: HookInput,
): Promise<SaveResult> {
  if (input.url !== undefined) {
    const settings = await currentSettings(db);
    const allowLocal = projectId === null
      ? settings.allow_local_requests_from_system_hooks
      : settings.allow_local_requests_from_web_hooks_and_services;
    const problem = urlProblem(input.url, allowLocal);
    if (problem) return { ok: false, field: 'url', message: problem === 'is not a valid URL' ? 'must be a valid URL' : `is blocked: ${problem}` };
  }
  if (input.push_events_branch_filter !== undefined && !branchFilterValid(input.push_events_branch_filter)) {
    return { ok: false, field: 'push_events_branch_filter', message: 'is not a valid branch name' };
  }
  const values: HookWrite = {};
  if (input.url !== undefined) values.url = input.url;
  if (input.token !== undefined) values.token_sealed = input.token === '' ? null : sealer.seal(input.token);
  if (input.enable_ssl_verification !== undefined) values.enable_ssl_verification = input.enable_ssl_verification ? 1 : 0;
  if (input.push_events_branch_filter !== undefined) values.push_events_branch_filter = input.push_events_branch_filter || null;
  for (const [flag, on] of Object.entries(input.flags)) if (on !== undefined) values[flag as HookFlag] = on ? 1 : 0;
  if (existing) return { ok: true, row: await updateHook(db, existing.id, values) };
  // A system hook hears repository updates and nothing else unless told (SystemHook's defaults).
  const defaults: HookWrite = projectId === null ? { push_events: 0, repository_update_events: 1 } : {};
  return { ok: true, row: await insertHook(db, projectId, { ...defaults, ...values, url: input.url! }) };
}
