/**
 * The environments and deployments of a new pipeline (Gitlab::Ci::Pipeline::Seed::Environment and
 * Seed::Deployment, 15.2).
 *
 * `expandJobEnvironments` runs on the selected configuration: each job's `environment:name` and
 * `url` are expanded with the variables the pipeline is created with and the job's own
 * (Ci::Build#expanded_environment_name, #expanded_environment_url), so `review/$CI_COMMIT_REF_SLUG`
 * is stored as the name it stands for.
 *
 * `createPipelineEnvironments` runs in the transaction that inserts the jobs: every job with an
 * environment finds or makes it by name (a stop job only finds it); a deploying job (`action:
 * start`) gets a deployment, `created`, numbered in the project, that then follows the job
 * (deployments/deployment-sync.ts). A name that is no valid environment name after expansion
 * makes no environment, and the job runs without one.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { PipelineConfig } from '../ci-config/ci-config.ts';
import { expandVariables } from '../ci-config/merge.ts';
import { insertDeployment } from '../deployments/deployments.queries.ts';
import { environmentSlug, environmentType, guessTier, isValidEnvironmentName, TIERS } from './environment-rules.ts';
import { findEnvironmentByName, findOrInsertEnvironment, pipelineBuildsWithOptions } from './environments.queries.ts';
import { jobEnvironment, startsEnvironment } from './job-environment.ts';

export function expandJobEnvironments(config: PipelineConfig, predefined: ReadonlyMap<string, string>): void {
  for (const job of config.jobs) {
    if (!job.environment) continue;
    const vars = new Map(predefined);
    vars.set('CI_JOB_NAME', job.name);
    vars.set('CI_JOB_STAGE', job.stage);
    for (const v of job.variables) vars.set(v.key, expandVariables(v.value, vars));
    const expanded = { ...job.environment, name: expandVariables(job.environment.name, vars).trim() };
    if (job.environment.url !== undefined) expanded.url = expandVariables(job.environment.url, vars);
    job.environment = expanded;
  }
}

export async function createPipelineEnvironments(trx: Transaction<DB>, pipeline: PipelineRow): Promise<void> {
  for (const job of await pipelineBuildsWithOptions(trx, pipeline.id)) {
    const e = jobEnvironment(job.options);
    if (!e || !isValidEnvironmentName(e.name)) continue;
    const tier = e.deployment_tier && (TIERS as readonly string[]).includes(e.deployment_tier) ? e.deployment_tier : guessTier(e.name);
    const environment = e.action === 'stop'
      ? await findEnvironmentByName(trx, pipeline.project_id, e.name)
      : await findOrInsertEnvironment(trx, {
        project_id: pipeline.project_id, name: e.name, slug: environmentSlug(e.name), external_url: null,
        environment_type: environmentType(e.name), state: 'available', tier,
      });
    if (!environment || !startsEnvironment(e)) continue;
    await insertDeployment(trx, {
      project_id: pipeline.project_id, environment_id: environment.id, ref: job.ref, tag: job.tag, sha: pipeline.sha,
      user_id: job.user_id, deployable_id: job.id, on_stop: e.on_stop ?? null, status: 'created',
    });
  }
}
