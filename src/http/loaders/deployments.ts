/**
 * Deployment entities for a page: their environments, users and jobs (the Job entity, with what
 * it shows beyond its row) read together.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeploymentRow } from '../../db/tables/environments.ts';
import { environmentsByIds } from '../../domain/environments/environments.queries.ts';
import { findUsersByIds } from '../../domain/users/users-batch.queries.ts';
import { findJob } from '../../domain/jobs/jobs.queries.ts';
import { presentDeployment, type Deployment } from '../entities/environment.ts';
import { presentJob, type JobEntityRow } from '../entities/job.ts';
import { loadJobExtras } from './jobs.ts';
import type { ProjectContext } from './containers.ts';

export async function presentDeployments(
  db: Kysely<DB>, externalUrl: string, ctx: ProjectContext, rows: DeploymentRow[],
): Promise<Deployment[]> {
  const environments = new Map((await environmentsByIds(db, [...new Set(rows.map((d) => d.environment_id))])).map((e) => [e.id, e]));
  const userIds = [...new Set(rows.flatMap((d) => (d.user_id === null ? [] : [d.user_id])))];
  const users = new Map((await findUsersByIds(db, userIds)).map((u) => [u.id, u]));
  const jobs: JobEntityRow[] = [];
  for (const id of new Set(rows.flatMap((d) => (d.deployable_id === null ? [] : [d.deployable_id])))) {
    const job = await findJob(db, id);
    if (job) jobs.push(job);
  }
  const extras = await loadJobExtras(db, externalUrl, jobs, new Map([[ctx.project.id, `${externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`]]));
  const presentedJobs = new Map(jobs.map((j) => [j.id, presentJob(j, extras)]));
  return rows.map((d) => presentDeployment(
    d, environments.get(d.environment_id)!, d.user_id === null ? undefined : users.get(d.user_id),
    d.deployable_id === null ? null : presentedJobs.get(d.deployable_id) ?? null, externalUrl,
  ));
}
