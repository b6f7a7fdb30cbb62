/**
 * Deployments made and moved through the API (lib/api/deployments.rb 15.2, Deployments::CreateService
 * and UpdateService): for deployments that happen outside kiln's CI. POST finds or makes the named
 * environment, numbers a deployment and moves it to the given status through the state machine,
 * so a `success` updates the environment and links merge requests as a job's would. PUT moves one
 * such deployment; one a job made follows its job and is refused.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeploymentRow, EnvironmentRow } from '../../db/tables/environments.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { environmentSlug, environmentType, guessTier, nameErrors } from '../environments/environment-rules.ts';
import { findOrInsertEnvironment } from '../environments/environments.queries.ts';
import { findDeploymentInProject, insertDeployment } from './deployments.queries.ts';
import { moveDeployment } from './deployment-sync.ts';

export const API_STATUSES = ['running', 'success', 'failed', 'canceled'] as const;
export type ApiStatus = (typeof API_STATUSES)[number];

/** The state machine's event for each status the API may ask for (its text in a refusal). */
const EVENTS: Record<ApiStatus, string> = { running: 'run', success: 'succeed', failed: 'drop', canceled: 'cancel' };

export type DeploymentResult =
  | { ok: true; deployment: DeploymentRow; environment: EnvironmentRow }
  | { ok: false; errors: ValidationErrors };

export async function createApiDeployment(
  db: Kysely<DB>, projectId: number, userId: number,
  p: { environment: string; sha: string; ref: string; tag: boolean; status: ApiStatus },
): Promise<DeploymentResult> {
  const errors = new ValidationErrors();
  nameErrors(errors, p.environment);
  if (p.sha.trim() === '') errors.add('sha', "can't be blank");
  if (p.ref.trim() === '') errors.add('ref', "can't be blank");
  if (!errors.empty) return { ok: false, errors };
  const created = await db.transaction().execute(async (trx) => {
    const environment = await findOrInsertEnvironment(trx, {
      project_id: projectId, name: p.environment, slug: environmentSlug(p.environment), external_url: null,
      environment_type: environmentType(p.environment), state: 'available', tier: guessTier(p.environment),
    });
    if (!environment) return null;
    const deployment = await insertDeployment(trx, {
      project_id: projectId, environment_id: environment.id, ref: p.ref, tag: p.tag ? 1 : 0, sha: p.sha,
      user_id: userId, deployable_id: null, on_stop: null, status: 'created',
    });
    const moved = await moveDeployment(trx, deployment, p.status, null);
    return { deployment: moved ?? deployment, environment };
  });
  if (!created) {
    errors.add('environment', 'has already been taken');
    return { ok: false, errors };
  }
  return { ok: true, ...created };
}

export async function updateApiDeployment(
  db: Kysely<DB>, deployment: DeploymentRow, environment: EnvironmentRow, status: ApiStatus,
): Promise<DeploymentResult> {
  const moved = await db.transaction().execute((trx) => moveDeployment(trx, deployment, status, null));
  if (!moved) {
    const errors = new ValidationErrors();
    errors.add('status', `cannot transition via "${EVENTS[status]}"`);
    return { ok: false, errors };
  }
  return { ok: true, deployment: (await findDeploymentInProject(db, deployment.project_id, deployment.id)) ?? moved, environment };
}
