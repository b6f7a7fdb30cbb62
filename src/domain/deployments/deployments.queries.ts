/** Every Kysely call about deployment rows and the merge requests they shipped. */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeploymentRow, DeploymentsTable } from '../../db/tables/environments.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type NewDeployment = Pick<
  DeploymentRow, 'project_id' | 'environment_id' | 'ref' | 'tag' | 'sha' | 'user_id' | 'deployable_id' | 'on_stop' | 'status'
>;

/** Numbers and inserts a deployment; `trx` holds the project's counter until it commits. */
export async function insertDeployment(trx: Transaction<DB>, d: NewDeployment): Promise<DeploymentRow> {
  const iid = await nextIid(trx, { project_id: d.project_id }, 'deployments');
  const now = nowIso();
  return trx.insertInto('deployments').values({ ...d, iid, created_at: now, updated_at: now, finished_at: null })
    .returningAll().executeTakeFirstOrThrow();
}

export async function findDeploymentById(db: Db, id: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findDeploymentInProject(db: Db, projectId: number, id: number): Promise<DeploymentRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('deployments').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export function findDeploymentOfJob(db: Db, jobId: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('deployable_id', '=', jobId).executeTakeFirst();
}

/** Moves the status only from one of `from` (a state machine event): the updated row, or undefined. */
export async function changeDeploymentStatus(
  db: Db, id: number, from: readonly string[], to: string, set: Omit<Updateable<DeploymentsTable>, 'id' | 'status'> = {},
): Promise<DeploymentRow | undefined> {
  return db.updateTable('deployments').set({ ...set, status: to, updated_at: nowIso() })
    .where('id', '=', id).where('status', 'in', from).returningAll().executeTakeFirst();
}

export const DEPLOYMENT_ORDERS = ['id', 'iid', 'created_at', 'updated_at', 'ref'] as const;

export interface DeploymentFilters {
  environmentId?: number;
  status?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  orderBy: (typeof DEPLOYMENT_ORDERS)[number];
  sort: 'asc' | 'desc';
}

/** GET /projects/:id/deployments (DeploymentsFinder): filters, then the order with id breaking ties. */
export function projectDeploymentsQuery(db: Db, projectId: number, f: DeploymentFilters) {
  let q = db.selectFrom('deployments').selectAll().where('project_id', '=', projectId);
  if (f.environmentId !== undefined) q = q.where('environment_id', '=', f.environmentId);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.updatedAfter !== undefined) q = q.where('updated_at', '>', f.updatedAfter);
  if (f.updatedBefore !== undefined) q = q.where('updated_at', '<', f.updatedBefore);
  q = q.orderBy(f.orderBy, f.sort);
  return f.orderBy === 'id' ? q : q.orderBy('id', f.sort);
}

/** The newest successful deployment of each environment (Environment#last_deployment). */
export async function lastSuccessfulDeployments(db: Db, environmentIds: number[]): Promise<Map<number, DeploymentRow>> {
  const out = new Map<number, DeploymentRow>();
  for (const id of environmentIds) {
    const row = await db.selectFrom('deployments').selectAll().where('environment_id', '=', id).where('status', '=', 'success')
      .orderBy('id', 'desc').limit(1).executeTakeFirst();
    if (row) out.set(id, row);
  }
  return out;
}

/** The environment's newest deployment with a job (the one whose `on_stop` stops it: Environment#stop_actions). */
export function lastDeploymentWithJob(db: Db, environmentId: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('environment_id', '=', environmentId)
    .where('status', 'in', ['success', 'running', 'failed', 'canceled', 'created', 'blocked'])
    .where('deployable_id', 'is not', null).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** The successful deployment of the environment before `deploymentId` (Deployment#previous_deployment). */
export function previousSuccessfulDeployment(db: Db, environmentId: number, deploymentId: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').selectAll().where('environment_id', '=', environmentId).where('status', '=', 'success')
    .where('id', '<', deploymentId).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/**
 * Links the merge requests merged into `ref` after `after` (every earlier one for a first
 * deployment) and up to `upTo` to the deployment; a link already there is kept.
 */
export async function linkMergedMergeRequests(
  db: Db, deploymentId: number, projectId: number, ref: string, after: string | null, upTo: string,
): Promise<void> {
  let q = db.selectFrom('merge_requests').select('id').where('project_id', '=', projectId).where('target_branch', '=', ref)
    .where('state', '=', 'merged').where('merged_at', '<=', upTo);
  if (after !== null) q = q.where('merged_at', '>', after);
  const ids = (await q.orderBy('id').limit(1000).execute()).map((r) => r.id);
  if (ids.length === 0) return;
  await db.insertInto('deployment_merge_requests').values(ids.map((id) => ({ deployment_id: deploymentId, merge_request_id: id })))
    .onConflict((oc) => oc.doNothing()).execute();
}

/** The merge requests a deployment shipped, as MergeRequestsFinder lists them (newest created first by default). */
export function deploymentMergeRequestsQuery(db: Db, deploymentId: number, orderBy: 'created_at' | 'updated_at', sort: 'asc' | 'desc') {
  return db.selectFrom('merge_requests').selectAll('merge_requests')
    .innerJoin('deployment_merge_requests', 'deployment_merge_requests.merge_request_id', 'merge_requests.id')
    .where('deployment_merge_requests.deployment_id', '=', deploymentId)
    .orderBy(`merge_requests.${orderBy}`, sort).orderBy('merge_requests.id', sort);
}

/** Environments that have deployments left (DELETE refuses none; kept for the counts a stop needs). */
export function deploymentsOfEnvironment(db: Db, environmentId: number): Promise<DeploymentRow[]> {
  return db.selectFrom('deployments').selectAll().where('environment_id', '=', environmentId).orderBy('id').execute();
}
