/**
 * Deployments following their jobs, and environments following their deployments and stop jobs.
 *
 * jobs.queries.ts applyJobEvent calls `jobChanged` after every transition it applies, on the same
 * handle (inside the caller's transaction when there is one):
 * - a deploying job's deployment takes the job's status (Deployment#sync_status_with, 15.2: a
 *   manual job's deployment is blocked, a pending one keeps its status);
 * - a deployment that succeeds updates its environment (Deployments::UpdateEnvironmentService:
 *   the job's expanded URL, tier and auto_stop_in, and the `start` event, which makes a stopped
 *   environment available again) and links the merge requests it shipped
 *   (Deployments::LinkMergeRequestsService);
 * - a stop job (`action: stop`) that succeeds stops its environment (Ci::BuildSuccessWorker,
 *   Environment `stop_complete`); one that fails or is canceled gives a stopping environment back
 *   as available (the Service's recover_stuck_stopping).
 *
 * Nothing here imports the jobs area, which imports this.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BuildRow } from '../../db/tables/ci.ts';
import type { DeploymentRow } from '../../db/tables/environments.ts';
import { nowIso } from '../clock.ts';
import { parseDuration } from '../ci-config/duration.ts';
import {
  changeEnvironmentState, findEnvironmentById, findEnvironmentByName, updateEnvironment,
} from '../environments/environments.queries.ts';
import { jobEnvironment, startsEnvironment, type JobEnvironment } from '../environments/job-environment.ts';
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import {
  changeDeploymentStatus, findDeploymentOfJob, insertDeployment, linkMergedMergeRequests, previousSuccessfulDeployment,
} from './deployments.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const DEPLOYMENT_STATUSES = ['created', 'running', 'success', 'failed', 'canceled', 'skipped', 'blocked'] as const;
const FINISHED = ['success', 'failed', 'canceled'];
/** The changes project hooks hear (Deployment's after_transition to running, success, failed, canceled). */
const HOOKED = ['running', 'success', 'failed', 'canceled'];

/** The deployment state machine (app/models/deployment.rb): the states each target may be reached from. */
const FROM: Record<string, readonly string[]> = {
  running: ['created', 'blocked'],
  success: DEPLOYMENT_STATUSES.filter((s) => s !== 'success'),
  failed: DEPLOYMENT_STATUSES.filter((s) => s !== 'failed'),
  canceled: DEPLOYMENT_STATUSES.filter((s) => s !== 'canceled'),
  skipped: DEPLOYMENT_STATUSES.filter((s) => s !== 'skipped'),
  blocked: ['created'],
};

/**
 * Moves a deployment to `to` if the state machine allows it; a success runs what follows one.
 * Returns the updated row, or undefined when the transition does not apply.
 */
export async function moveDeployment(
  db: Db, deployment: DeploymentRow, to: string, environmentOptions: JobEnvironment | null,
): Promise<DeploymentRow | undefined> {
  const from = FROM[to];
  if (!from) return undefined;
  const updated = await changeDeploymentStatus(db, deployment.id, from, to, FINISHED.includes(to) ? { finished_at: nowIso() } : {});
  if (updated && to === 'success') await deploymentSucceeded(db, updated, environmentOptions);
  // Queued on the change's own handle: it is delivered only if the change commits.
  if (updated && HOOKED.includes(to)) {
    await queueObjectHook(db, { kind: 'deployment', id: updated.id, projectId: updated.project_id, status: to, at: updated.updated_at });
  }
  return updated;
}

async function deploymentSucceeded(db: Db, d: DeploymentRow, e: JobEnvironment | null): Promise<void> {
  const environment = await findEnvironmentById(db, d.environment_id);
  if (!environment) return;
  const set: Parameters<typeof updateEnvironment>[2] = {};
  if (e?.url) set.external_url = e.url;
  if (e?.deployment_tier) set.tier = e.deployment_tier;
  if (e?.auto_stop_in !== undefined) {
    const seconds = parseDuration(e.auto_stop_in);
    if (seconds !== undefined) set.auto_stop_at = seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString();
  }
  if (Object.keys(set).length > 0) await updateEnvironment(db, environment.id, set);
  // The `start` event: a stopped environment deployed to again is available.
  await changeEnvironmentState(db, environment.id, ['stopped'], 'available', { auto_delete_at: null });
  const previous = await previousSuccessfulDeployment(db, d.environment_id, d.id);
  await linkMergedMergeRequests(db, d.id, d.project_id, d.ref, previous?.finished_at ?? null, d.finished_at ?? nowIso());
}

/** The deployment status a job's status stands for, or null when it changes nothing. */
function deploymentStatusFor(jobStatus: string): string | null {
  if (jobStatus === 'manual') return 'blocked';
  return ['running', 'success', 'failed', 'canceled', 'skipped'].includes(jobStatus) ? jobStatus : null;
}

/** After a job's transition: its deployment, or its environment when it stops one. */
export async function jobChanged(db: Db, job: BuildRow): Promise<void> {
  if (job.type !== 'build') return;
  const e = jobEnvironment(job.options);
  if (!e) return;
  if (e.action === 'stop') {
    const environment = await findEnvironmentByName(db, job.project_id, e.name);
    if (!environment) return;
    if (job.status === 'success') await changeEnvironmentState(db, environment.id, ['available', 'stopping'], 'stopped');
    else if (job.status === 'failed' || job.status === 'canceled') {
      await changeEnvironmentState(db, environment.id, ['stopping'], 'available');
    }
    return;
  }
  if (!startsEnvironment(e)) return;
  const to = deploymentStatusFor(job.status);
  if (to === null) return;
  const deployment = await findDeploymentOfJob(db, job.id);
  if (deployment && deployment.status !== to) await moveDeployment(db, deployment, to, e);
}

/** A retried deploying job deploys again: its clone gets a deployment of its own (Ci::RetryJobService). */
export async function deploymentForRetry(trx: Transaction<DB>, oldJobId: number, clone: BuildRow): Promise<void> {
  const old = await findDeploymentOfJob(trx, oldJobId);
  if (!old) return;
  await insertDeployment(trx, {
    project_id: old.project_id, environment_id: old.environment_id, ref: old.ref, tag: old.tag, sha: old.sha,
    user_id: clone.user_id, deployable_id: clone.id, on_stop: old.on_stop, status: 'created',
  });
}
