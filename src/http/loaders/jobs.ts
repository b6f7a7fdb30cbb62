/**
 * Loading what job entities show beyond their rows, for a whole page in a handful of queries:
 * pipelines (and downstream pipelines), users, artifacts, runners and project web URLs.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import { ByIds, byIdsTogether } from '../../db/query-shape.ts';
import { pipelinesByIds } from '../../domain/pipelines/pipelines.queries.ts';
import { artifactsByJobIds, inArtifactOrder } from '../../domain/jobs/jobs.queries.ts';
import { usersById } from '../../domain/users/users-batch.queries.ts';
import { runnersByIds } from '../../domain/runners/runners.queries.ts';
import { namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import type { JobArtifactRow, PipelineRow, RunnerRow } from '../../db/tables/ci.ts';
import type { JobEntityRow, JobExtras } from '../entities/job.ts';

const projectPathsById = new ByIds((db, ids) => db.selectFrom('projects').select(['id', 'path', 'namespace_id']).where('id', 'in', ids));

/**
 * `{external}/{namespace full path}/{project path}` of each project; `known` ones (the project a
 * route has loaded already) are not looked up again.
 */
export async function projectWebUrls(
  db: Kysely<DB>, externalUrl: string, projectIds: number[], known?: ReadonlyMap<number, string>,
): Promise<Map<number, string>> {
  const out = new Map(known);
  const missing = projectIds.filter((id) => !out.has(id));
  if (missing.length === 0) return out;
  const projects = await projectPathsById.all(db, missing);
  const paths = await namespacePathsById(db, projects.map((p) => p.namespace_id));
  for (const p of projects) out.set(p.id, `${externalUrl}/${paths.get(p.namespace_id)!.fullPath}/${p.path}`);
  return out;
}

/**
 * `known`: web URLs of projects the caller has loaded already (a project's own list). The page's
 * pipelines, artifacts, users and runners are read together (one round trip on PostgreSQL).
 */
export async function loadJobExtras(
  db: Kysely<DB>, externalUrl: string, jobs: JobEntityRow[], known?: ReadonlyMap<number, string>,
): Promise<JobExtras> {
  const pipelineIds = jobs.flatMap(
    (j) => (j.downstream_pipeline_id === null ? [j.pipeline_id] : [j.pipeline_id, j.downstream_pipeline_id]),
  );
  const [pipelineRows, artifactRows, userRows, runnerRows] = await byIdsTogether<[PipelineRow, JobArtifactRow, UserRow, RunnerRow]>(db, [
    [pipelinesByIds, pipelineIds],
    [artifactsByJobIds, jobs.filter((j) => j.type === 'build').map((j) => j.id)],
    [usersById, jobs.flatMap((j) => (j.user_id === null ? [] : [j.user_id]))],
    [runnersByIds, jobs.flatMap((j) => (j.runner_id === null ? [] : [j.runner_id]))],
  ]);
  const pipelines = new Map(pipelineRows.map((p) => [p.id, p]));
  const artifacts = new Map<number, JobArtifactRow[]>();
  for (const a of inArtifactOrder(artifactRows)) {
    const list = artifacts.get(a.job_id) ?? [];
    list.push(a);
    artifacts.set(a.job_id, list);
  }
  return {
    externalUrl,
    projectWebUrls: await projectWebUrls(
      db, externalUrl, [...jobs.map((j) => j.project_id), ...pipelineRows.map((p) => p.project_id)], known,
    ),
    pipelines,
    users: new Map(userRows.map((u) => [u.id, u])),
    artifacts,
    runners: new Map(runnerRows.map((r) => [r.id, r])),
  };
}
