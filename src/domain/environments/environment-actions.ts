/**
 * What the environments API does (lib/api/environments.rb 15.2 and app/services/environments/*):
 * create and update with the model's validations, stop (playing the stop jobs of the last
 * deployment, or at once without any: Environment#stop_with_actions!), stop the stale ones, and
 * schedule stopped review apps for deletion. The automatic stop (auto_stop_at) and the scheduled
 * deletion (auto_delete_at) run from the CI sweep (sweepEnvironments).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BuildRow } from '../../db/tables/ci.ts';
import type { EnvironmentRow } from '../../db/tables/environments.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { ValidationErrors } from '../validation-errors.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { findJob, latestPipelineJobs } from '../jobs/jobs.queries.ts';
import { playJob } from '../jobs/job-actions.ts';
import { lastDeploymentWithJob } from '../deployments/deployments.queries.ts';
import {
  environmentSlug, environmentType, externalUrlErrors, guessTier, nameErrors, normaliseUrl, TIERS,
} from './environment-rules.ts';
import {
  changeEnvironmentState, deleteEnvironments, dueAutoDeletions, dueAutoStops, findEnvironmentById, findEnvironmentByName, insertEnvironment,
  staleEnvironments, stoppedReviewApps, updateEnvironment,
} from './environments.queries.ts';

export type EnvironmentResult = { ok: true; environment: EnvironmentRow } | { ok: false; errors: ValidationErrors };

function taken(errors: ValidationErrors, attribute: 'name' | 'slug'): EnvironmentResult {
  errors.add(attribute, 'has already been taken');
  return { ok: false, errors };
}

export async function createEnvironment(
  db: Kysely<DB>, projectId: number, p: { name: string; external_url?: string; tier?: string },
): Promise<EnvironmentResult> {
  const errors = new ValidationErrors();
  const url = normaliseUrl(p.external_url);
  nameErrors(errors, p.name);
  externalUrlErrors(errors, url);
  if (!errors.empty) return { ok: false, errors };
  const slug = environmentSlug(p.name);
  try {
    const environment = await insertEnvironment(db, {
      project_id: projectId, name: p.name, slug, external_url: url, environment_type: environmentType(p.name),
      state: 'available', tier: p.tier ?? guessTier(p.name),
    });
    return { ok: true, environment };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return taken(errors, (await findEnvironmentByName(db, projectId, p.name)) ? 'name' : 'slug');
  }
}

/** PUT: the name (deprecated but still accepted in 15.2; the slug stays), the URL and the tier. */
export async function changeEnvironment(
  db: Kysely<DB>, environment: EnvironmentRow, p: { name?: string; external_url?: string; tier?: string },
): Promise<EnvironmentResult> {
  const errors = new ValidationErrors();
  const name = p.name ?? environment.name;
  const url = p.external_url === undefined ? environment.external_url : normaliseUrl(p.external_url);
  nameErrors(errors, name);
  externalUrlErrors(errors, url);
  if (!errors.empty) return { ok: false, errors };
  try {
    const updated = await updateEnvironment(db, environment.id, {
      name, external_url: url, environment_type: environmentType(name), ...(p.tier !== undefined ? { tier: p.tier } : {}),
    });
    return { ok: true, environment: updated ?? environment };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return taken(errors, 'name');
  }
}

export const isTier = (t: string): boolean => (TIERS as readonly string[]).includes(t);

/**
 * The jobs that stop the environment: of its last deployment made by a job, the job its `on_stop`
 * names in the same pipeline, when it can be played (Deployment#stop_action, Ci::Build#playable?).
 */
export async function stopActions(db: Kysely<DB>, environment: EnvironmentRow): Promise<BuildRow[]> {
  const deployment = await lastDeploymentWithJob(db, environment.id);
  if (!deployment?.on_stop || deployment.deployable_id === null) return [];
  const deployable = await findJob(db, deployment.deployable_id);
  if (!deployable) return [];
  const action = (await latestPipelineJobs(db, deployable.pipeline_id))
    .find((j) => j.type === 'build' && j.name === deployment.on_stop && j.run_when === 'manual');
  return action && ['manual', 'success', 'failed', 'canceled'].includes(action.status) ? [action] : [];
}

/**
 * Stops an available environment (Environments::StopService): with `force`, or without stop
 * jobs, it is stopped at once; otherwise it is `stopping` until its stop job succeeds, and the
 * stop jobs are played by the caller's name. Returns the environment as it is afterwards.
 */
export async function stopEnvironment(
  env: CiEnv, environment: EnvironmentRow, userId: number, force: boolean,
): Promise<EnvironmentRow> {
  if (force) return (await changeEnvironmentState(env.db, environment.id, ['available', 'stopping'], 'stopped')) ?? environment;
  if (environment.state !== 'available') return environment;
  const actions = await stopActions(env.db, environment);
  const stopped = await changeEnvironmentState(env.db, environment.id, ['available'], actions.length > 0 ? 'stopping' : 'stopped');
  if (!stopped) return environment;
  for (const action of actions) await playJob(env, action, userId, []);
  // A stop job that already ran may have finished the stop (jobs.queries → deployment-sync).
  return (await findEnvironmentById(env.db, environment.id)) ?? stopped;
}

export const STALE_LIMIT = 1000;

/**
 * POST …/environments/stop_stale (Environments::StopStaleService): every available environment
 * neither deployed to nor changed since `before` is stopped as a user stopping it would.
 */
export async function stopStaleEnvironments(env: CiEnv, projectId: number, userId: number, before: string): Promise<void> {
  for (const environment of await staleEnvironments(env.db, projectId, before, STALE_LIMIT)) {
    await stopEnvironment(env, environment, userId, false);
  }
}

/** A week after scheduling, a review app scheduled for deletion is deleted (Environment#schedule_to_delete). */
export const DELETE_AFTER_MS = 7 * 86_400_000;

/**
 * DELETE …/environments/review_apps (Environments::ScheduleToDeleteReviewAppsService): the
 * stopped environments of the `review` folder changed before `before`, at most `limit`, marked
 * for deletion a week from now unless `dryRun`. Every one of them may be removed by a caller who
 * may remove environments (EnvironmentPolicy asks only that it is stopped).
 */
export async function scheduleReviewAppsDeletion(
  db: Kysely<DB>, projectId: number, before: string, limit: number, dryRun: boolean,
): Promise<EnvironmentRow[]> {
  const rows = await stoppedReviewApps(db, projectId, before, limit);
  if (!dryRun && rows.length > 0) {
    const at = new Date(Date.now() + DELETE_AFTER_MS).toISOString();
    await db.transaction().execute(async (trx) => {
      for (const r of rows) await updateEnvironment(trx, r.id, { auto_delete_at: at });
    });
  }
  return rows;
}

/**
 * The environments' share of the CI sweep (workers/ci-sweeper.ts): environments past their
 * auto_stop_at are stopped with their stop jobs (Environments::AutoStopCronWorker, by the user of
 * the job that deployed), stopped ones past auto_delete_at are deleted (Environments::AutoDeleteCronWorker).
 */
export async function sweepEnvironments(env: CiEnv, now: Date): Promise<void> {
  const at = now.toISOString();
  for (const environment of await dueAutoStops(env.db, at, 100)) {
    await updateEnvironment(env.db, environment.id, { auto_stop_at: null });
    const deployment = await lastDeploymentWithJob(env.db, environment.id);
    await stopEnvironment(env, environment, deployment?.user_id ?? 0, false);
  }
  const due = await dueAutoDeletions(env.db, at, 100);
  await deleteEnvironments(env.db, due.map((e) => e.id));
}
