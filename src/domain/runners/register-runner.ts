/**
 * Registers a runner (Ci::Runners::RegisterRunnerService): with the instance registration token an
 * instance runner, with a project's a project runner enabled for that project, with a group's a
 * group runner of that group. Its authentication token is returned once and stored only as a
 * digest.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { digest, generateToken } from '../tokens/secret.ts';
import { insertRunner, insertRunnerProject } from './runners.queries.ts';
import type { RegistrationOwner } from './registration-token.ts';

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
export function runnerErrors(
  a: { maintenanceNote?: string | null; tagList: string[]; runUntagged: boolean; maximumTimeout?: number | null },
): Record<string, string[]> {
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

/** `owner`: whose registration token the caller presented (registration-token.ts), null for none. */
export async function registerRunner(db: Kysely<DB>, owner: RegistrationOwner | null, a: RunnerAttributes): Promise<RegisterResult> {
  if (!owner) return { ok: false, reason: 'forbidden' };
  const tagList = normalizeTags(a.tagList ?? []);
  const runUntagged = a.runUntagged ?? true;
  const errors = runnerErrors({ maintenanceNote: a.maintenanceNote, tagList, runUntagged, maximumTimeout: a.maximumTimeout });
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };
  const token = generateToken(20);
  const runnerType = owner.kind === 'instance' ? 'instance_type' : owner.kind === 'group' ? 'group_type' : 'project_type';
  const runner = await db.transaction().execute(async (trx) => {
    const row = await insertRunner(trx, {
      token_digest: digest(token),
      description: a.description ?? null,
      maintenance_note: a.maintenanceNote ?? null,
      runner_type: runnerType,
      group_id: owner.kind === 'group' ? owner.groupId : null,
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
    if (owner.kind === 'project') await insertRunnerProject(trx, row.id, owner.projectId);
    return row;
  });
  return { ok: true, runner, token };
}
