/**
 * Creating, updating and deleting a CI/CD variable of a project, a group or the instance
 * (Ci::ChangeVariableService, Admin::Ci::Variables). Values are sealed before they reach the
 * database; key + environment scope is unique per owner by a unique index, and a violation is
 * answered as the Service's uniqueness validation: `key: ["(KEY) has already been taken"]`.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CiVariableRow } from '../../db/tables/ci-variables.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import type { Sealer } from './encryption.ts';
import { insertVariable, updateVariable as updateRow, type VariableOwner } from './ci-variables.queries.ts';
import { normaliseKey, variableErrors, type VariableType } from './variable-rules.ts';

export interface VariableParams {
  key?: string;
  value?: string;
  variable_type?: VariableType;
  protected?: boolean;
  masked?: boolean;
  raw?: boolean;
  environment_scope?: string;
}

/** A variable as read: its row and its value, opened. */
export interface Variable {
  row: CiVariableRow;
  value: string;
}

export type ChangeResult = { ok: true; variable: Variable } | { ok: false; errors: Record<string, string[]> };

const taken = (key: string): ChangeResult => ({ ok: false, errors: { key: [`(${key}) has already been taken`] } });
const flag = (b: boolean) => (b ? 1 : 0) as 0 | 1;

export function openVariable(sealer: Sealer, row: CiVariableRow): Variable {
  return { row, value: sealer.open(row.encrypted_value) };
}

export async function createVariable(
  db: Kysely<DB>, sealer: Sealer, owner: VariableOwner, p: VariableParams & { key: string; value: string },
): Promise<ChangeResult> {
  const key = normaliseKey(p.key);
  // Instance variables have no environment scope (Ci::InstanceVariable): always `*`.
  const scope = owner.kind === 'instance' ? '*' : p.environment_scope ?? '*';
  const masked = p.masked ?? false;
  const errors = variableErrors({ key, value: p.value, masked, environment_scope: scope }, owner.kind !== 'instance');
  if (!errors.empty) return { ok: false, errors: errors.errors };
  try {
    const row = await insertVariable(db, {
      project_id: owner.kind === 'project' ? owner.id : null,
      group_id: owner.kind === 'group' ? owner.id : null,
      key,
      encrypted_value: sealer.seal(p.value),
      variable_type: p.variable_type ?? 'env_var',
      protected: flag(p.protected ?? false),
      masked: flag(masked),
      raw: flag(p.raw ?? false),
      environment_scope: scope,
    });
    return { ok: true, variable: { row, value: p.value } };
  } catch (err) {
    if (isUniqueViolation(err)) return taken(key);
    throw err;
  }
}

/**
 * Updates the attributes given; the key itself is the one the path names and stays. Null when the
 * variable was deleted meanwhile (the route answers as if it had not been found).
 */
export async function updateVariable(
  db: Kysely<DB>, sealer: Sealer, current: CiVariableRow, p: VariableParams,
): Promise<ChangeResult | null> {
  const value = p.value ?? sealer.open(current.encrypted_value);
  const masked = p.masked ?? current.masked === 1;
  const instance = current.project_id === null && current.group_id === null;
  const scope = instance ? '*' : p.environment_scope ?? current.environment_scope;
  const errors = variableErrors({ key: current.key, value, masked, environment_scope: scope }, !instance);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  try {
    const row = await updateRow(db, current.id, {
      ...(p.value !== undefined ? { encrypted_value: sealer.seal(p.value) } : {}),
      ...(p.variable_type !== undefined ? { variable_type: p.variable_type } : {}),
      ...(p.protected !== undefined ? { protected: flag(p.protected) } : {}),
      ...(p.masked !== undefined ? { masked: flag(p.masked) } : {}),
      ...(p.raw !== undefined ? { raw: flag(p.raw) } : {}),
      environment_scope: scope,
    });
    if (!row) return null;
    return { ok: true, variable: { row, value } };
  } catch (err) {
    if (isUniqueViolation(err)) return taken(current.key);
    throw err;
  }
}
