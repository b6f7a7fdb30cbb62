/** Every Kysely call about CI/CD variables: instance, group and project levels, and a pipeline's. */
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import { scopeMatches } from '../environments/environment-rules.ts';
import type { DB } from '../../db/types.ts';
import type { CiPipelineVariableRow, CiVariableRow, CiVariablesTable } from '../../db/tables/ci-variables.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Whose variables: a project's, a group's, or the instance's. */
export type VariableOwner = { kind: 'project'; id: number } | { kind: 'group'; id: number } | { kind: 'instance' };

function ofOwner(db: Db, owner: VariableOwner) {
  const q = db.selectFrom('ci_variables').selectAll();
  if (owner.kind === 'project') return q.where('project_id', '=', owner.id);
  if (owner.kind === 'group') return q.where('group_id', '=', owner.id);
  return instanceOnly(q);
}

/**
 * Instance variables, written with the expressions of the unique index
 * (ci_variables_owner_key_scope) so that both engines find them by an index range, not a scan.
 */
function instanceOnly<Q extends { where: (...args: any[]) => Q }>(q: Q): Q {
  return q.where(sql`coalesce(project_id, 0)`, '=', 0).where(sql`coalesce(group_id, 0)`, '=', 0);
}

/** A list in creation order (the Service presents `container.variables` unordered, i.e. by id). */
export function ownerVariablesQuery(db: Db, owner: VariableOwner) {
  return ofOwner(db, owner).orderBy('id');
}

/**
 * The variables of `key` (with `environmentScope`, when given). Two rows at most: the caller only
 * needs to know whether the key names more than one (the Service's 409 asking for a filter).
 */
export function findOwnerVariables(db: Db, owner: VariableOwner, key: string, environmentScope?: string): Promise<CiVariableRow[]> {
  let q = ofOwner(db, owner).where('key', '=', key);
  if (environmentScope !== undefined) q = q.where('environment_scope', '=', environmentScope);
  return q.orderBy('id').limit(2).execute();
}

export type NewVariable = Omit<CiVariableRow, 'id' | 'created_at' | 'updated_at'>;

export function insertVariable(db: Db, v: NewVariable): Promise<CiVariableRow> {
  const now = nowIso();
  return db.insertInto('ci_variables').values({ ...v, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export async function updateVariable(
  db: Db, id: number, set: Omit<Updateable<CiVariablesTable>, 'id' | 'project_id' | 'group_id'>,
): Promise<CiVariableRow | undefined> {
  return db.updateTable('ci_variables').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteVariable(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_variables').where('id', '=', id).execute();
}

/**
 * What a job may receive: the instance's, its groups' and its project's variables whose scope
 * covers the job's environment (`*` only for a job without one, as the Service gives such a job),
 * unprotected ones only unless the ref is protected.
 */
export async function variablesForJob(
  db: Db, projectId: number, groupIds: number[], includeProtected: boolean, environment: string | null = null,
): Promise<CiVariableRow[]> {
  // One indexed lookup per level (an OR across them would scan the table on every job request).
  const levels = [
    instanceOnly(db.selectFrom('ci_variables').selectAll()),
    ...(groupIds.length > 0 ? [db.selectFrom('ci_variables').selectAll().where('group_id', 'in', groupIds)] : []),
    db.selectFrom('ci_variables').selectAll().where('project_id', '=', projectId),
  ];
  const rows: CiVariableRow[] = [];
  for (let q of levels) {
    // Wildcard scopes (`review/*`) are matched against the name here (environment-rules.ts).
    if (environment === null) q = q.where('environment_scope', '=', '*');
    if (!includeProtected) q = q.where('protected', '=', 0);
    rows.push(...(await q.execute()).filter((r) => scopeMatches(r.environment_scope, environment)));
  }
  return rows;
}

export async function insertPipelineVariables(
  db: Db, pipelineId: number, rows: { key: string; encrypted_value: string; variable_type: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('ci_pipeline_variables').values(rows.map((r) => ({ ...r, pipeline_id: pipelineId }))).execute();
}

export function pipelineVariables(db: Db, pipelineId: number): Promise<CiPipelineVariableRow[]> {
  return db.selectFrom('ci_pipeline_variables').selectAll().where('pipeline_id', '=', pipelineId).orderBy('id').execute();
}
