/**
 * Deployment events (the Service's Deployments::HooksWorker with Gitlab::DataBuilder::Deployment,
 * 15.2): the deployment's status at the change and when it changed, its job's URL (none for a
 * deployment made through the API), its environment, the project, who deployed, and its commit's
 * URL and title (read from git).
 */
import { findDeploymentById } from '../deployments/deployments.queries.ts';
import { findEnvironmentById } from '../environments/environments.queries.ts';
import type { Kysely } from 'kysely';
import type { StorageShard } from '../../config/schema.ts';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { projectRepository } from '../repositories/project-repository.ts';
import type { ObjectHookEvent } from './object-hooks.ts';
import { hookTime, projectHookAttrs, userHookAttrs, type HookUrls } from './payloads.ts';
import { commitAttrs } from './push-hooks.ts';
import type { HookFlag } from './web-hooks.queries.ts';

/** What object-payloads.ts's ObjectDataEnv gives (declared here: that module imports this one). */
interface DeploymentDataEnv extends HookUrls {
  db: Kysely<DB>;
  storages: StorageShard[];
}

export async function buildDeployment(
  env: DeploymentDataEnv, project: ProjectRow, event: ObjectHookEvent,
): Promise<{ flag: HookFlag; data: Record<string, unknown> } | null> {
  const deployment = await findDeploymentById(env.db, event.id);
  if (!deployment) return null;
  const environment = await findEnvironmentById(env.db, deployment.environment_id);
  if (!environment) return null;
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const user = deployment.user_id === null ? null : await userHookAttrs(env.db, env, deployment.user_id);
  const [commit] = await commitAttrs(projectRepository(env.storages, project).gitDir, projectAttrs.web_url, [deployment.sha], false);
  return {
    flag: 'deployment_events',
    data: {
      object_kind: 'deployment', status: event.status ?? deployment.status,
      status_changed_at: hookTime(event.at ?? deployment.updated_at),
      deployment_id: deployment.id, deployable_id: deployment.deployable_id,
      deployable_url: deployment.deployable_id === null ? null : `${projectAttrs.web_url}/-/jobs/${deployment.deployable_id}`,
      environment: environment.name, environment_slug: environment.slug, environment_external_url: environment.external_url,
      project: projectAttrs, short_sha: deployment.sha.slice(0, 8), user,
      user_url: user ? `${env.externalUrl}/${user.username}` : null,
      commit_url: `${projectAttrs.web_url}/-/commit/${deployment.sha}`, commit_title: commit?.title ?? null,
    },
  };
}
