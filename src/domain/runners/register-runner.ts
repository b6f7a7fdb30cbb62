/**
 * Registers a runner with the instance registration token (Ci::Runners::RegisterRunnerService):
 * an instance runner whose authentication token is returned once and stored only as a digest.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { digest, generateToken } from '../tokens/secret.ts';
import { insertRunner } from './runners.queries.ts';

export const MAINTENANCE_NOTE_MAX = 1024;

export interface RunnerAttributes {
  description?: string | null;
  maintenanceNote?: string | null;
  active?: boolean;
  locked?: boolean;
  runUntagged?: boolean;
  tagList?: string[];
  accessLevel?: string;
  maximumTimeout?: number | null;
  info?: { name?: string; version?: string; revision?: string; platform?: string; architecture?: string };
  ipAddress?: string | null;
}

export type RegisterResult =
  | { ok: true; runner: RunnerRow; token: string }
  | { ok: false; reason: 'forbidden' }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> };

/** The model checks of Ci::Runner that registration and updates share. */
export function runnerErrors(a: { maintenanceNote?: string | null; tagList: string[]; runUntagged: boolean; maximumTimeout?: number | null }): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (a.maintenanceNote && a.maintenanceNote.length > MAINTENANCE_NOTE_MAX) {
    errors.maintenance_note = [`is too long (maximum is ${MAINTENANCE_NOTE_MAX} characters)`];
  }
  if (a.tagList.length === 0 && !a.runUntagged) errors.tags_list = ['can not be empty when runner is not allowed to pick untagged jobs'];
  if (a.maximumTimeout !== undefined && a.maximumTimeout !== null && a.maximumTimeout < 600) {
    errors.maximum_timeout = ['needs to be at least 10 minutes'];
  }
  return errors;
}

export function normalizeTags(tags: string[]): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter(Boolean))].sort();
}

/** `tokenValid`: whether the caller presented the registration token (registration-token.ts). */
export async function registerRunner(db: Kysely<DB>, tokenValid: boolean, a: RunnerAttributes): Promise<RegisterResult> {
  if (!tokenValid) return { ok: false, reason: 'forbidden' };
  const tagList = normalizeTags(a.tagList ?? []);
  const runUntagged = a.runUntagged ?? true;
  const errors = runnerErrors({ maintenanceNote: a.maintenanceNote, tagList, runUntagged, maximumTimeout: a.maximumTimeout });
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };
  const token = generateToken(20);
  const runner = await insertRunner(db, {
    token_digest: digest(token),
    description: a.description ?? null,
    maintenance_note: a.maintenanceNote ?? null,
    runner_type: 'instance_type',
    active: a.active === false ? 0 : 1,
    locked: a.locked ? 1 : 0,
    run_untagged: runUntagged ? 1 : 0,
    tag_list: tagList.join(' '),
    access_level: a.accessLevel ?? 'not_protected',
    maximum_timeout: a.maximumTimeout ?? null,
    name: a.info?.name ?? null,
    version: a.info?.version ?? null,
    revision: a.info?.revision ?? null,
    platform: a.info?.platform ?? null,
    architecture: a.info?.architecture ?? null,
    ip_address: a.ipAddress ?? null,
    contacted_at: null,
  });
  return { ok: true, runner, token };
}
