/**
 * A runner asks for work (Ci::RegisterJobService): the oldest pending build whose tags the runner
 * has (an untagged build only for runners that run untagged jobs) is claimed with an optimistic
 * pending → running transition, so two runners asking at once never get the same job. The job
 * gets a fresh job token, valid while it runs. Instance runners take the jobs of any project that
 * keeps shared_runners_enabled (the Service's Ci::Runner instance_type scope); a project
 * runner only those of the projects it is enabled for; a group runner those of the projects in
 * its group and the group's subgroups. A protected runner takes only the jobs of protected refs
 * (decided when the job is handed out; the Service records it on the job at its creation).
 */
import type { BuildRow, RunnerRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import { digest, generateToken } from '../tokens/secret.ts';
import { applyJobEvent, pendingBuilds } from '../jobs/jobs.queries.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { processPipeline } from '../pipelines/process-pipeline.ts';
import { ensurePersistentRef } from '../pipelines/persistent-ref.ts';
import { findPipeline } from '../pipelines/pipelines.queries.ts';
import { findProjectById, projectsWithoutSharedRunners } from '../projects/projects.queries.ts';
import { environmentVariables as jobEnvironmentVariables } from '../environments/job-environment.ts';
import { collectJobVariables, type CollectedVariable } from '../ci-variables/collect-variables.ts';
import { sealerFor } from '../ci-variables/encryption.ts';
import { deployTokenVariables } from '../deploy-tokens/deploy-tokens.ts';
import { descendantGroupIds } from '../namespaces/namespaces.queries.ts';
import { isProtectedRefOf } from '../protected-refs/protected-refs.ts';
import { projectIdsInNamespaces, runnerProjectIds } from './runners.queries.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

/** The projects whose jobs the runner may take; null for every project (instance runners). */
export async function runnerProjectScope(db: Kysely<DB>, runner: RunnerRow): Promise<Set<number> | null> {
  if (runner.runner_type === 'project_type') return new Set(await runnerProjectIds(db, runner.id));
  if (runner.runner_type === 'group_type' && runner.group_id !== null) {
    const groups = [runner.group_id, ...(await descendantGroupIds(db, [runner.group_id])).keys()];
    return new Set(await projectIdsInNamespaces(db, groups));
  }
  return runner.runner_type === 'instance_type' ? null : new Set();
}

const BATCH = 100;
/** How many pending jobs one request looks at before answering that nothing matches. */
const MAX_SCANNED = 2000;

export function runnerCanPick(runner: RunnerRow, job: BuildRow): boolean {
  const jobTags = job.tag_list === '' ? [] : job.tag_list.split(' ');
  if (jobTags.length === 0) return runner.run_untagged === 1;
  const runnerTags = new Set(runner.tag_list === '' ? [] : runner.tag_list.split(' '));
  return jobTags.every((t) => runnerTags.has(t));
}

export async function requestJob(env: CiEnv, runner: RunnerRow): Promise<{
  job: BuildRow; token: string; variables: CollectedVariable[]; deployVariables: CollectedVariable[];
  environmentVariables: CollectedVariable[];
  /** Whether the pipeline's persistent ref is there for the runner to fetch (persistent-ref.ts). */
  persistentRef: boolean;
} | null> {
  if (!runner.active) return null;
  const projects = await runnerProjectScope(env.db, runner);
  if (projects !== null && projects.size === 0) return null;
  // A protected runner (access_level ref_protected) takes only jobs of protected refs (Ci::Runner#ref_protected?).
  const protectedRefs = new Map<string, Promise<boolean>>();
  const onProtectedRef = (job: BuildRow) => {
    const key = `${job.project_id}\u0000${job.tag}\u0000${job.ref}`;
    let known = protectedRefs.get(key);
    if (!known) protectedRefs.set(key, known = isProtectedRefOf(env.db, job.project_id, job.ref, job.tag === 1));
    return known;
  };
  let afterId = 0;
  for (let scanned = 0; scanned < MAX_SCANNED; scanned += BATCH) {
    const batch = await pendingBuilds(env.db, afterId, BATCH);
    // An instance runner leaves the jobs of projects that turned shared runners off.
    const unshared = projects === null && batch.length > 0
      ? await projectsWithoutSharedRunners(env.db, [...new Set(batch.map((b) => b.project_id))]) : null;
    for (const candidate of batch) {
      if (!runnerCanPick(runner, candidate) || (projects !== null && !projects.has(candidate.project_id))) continue;
      if (unshared?.has(candidate.project_id)) continue;
      if (runner.access_level === 'ref_protected' && !await onProtectedRef(candidate)) continue;
      const token = generateToken(20);
      const timeout = runner.maximum_timeout === null ? candidate.timeout : Math.min(candidate.timeout, runner.maximum_timeout);
      const job = await applyJobEvent(env.db, candidate, 'run', {
        runner_id: runner.id, token_digest: digest(token), started_at: nowIso(), timeout,
      });
      if (job) {
        await processPipeline(env, job.pipeline_id);
        const project = (await findProjectById(env.db, job.project_id))!;
        // The Service writes refs/pipelines/<id> after the job's start is committed (Ci::Build, pending →
        // running), here after the pipeline took its start too, so its clock is not held up by git.
        const pipeline = await findPipeline(env.db, job.pipeline_id);
        const persistentRef = pipeline ? await ensurePersistentRef(env.db, env.storages, project, pipeline) : false;
        // The CI/CD variables of the job's instance, groups, project and pipeline (issue 20).
        const variables = await collectJobVariables(env.db, env.dataDir, job, project);
        const deployVariables = await deployTokenVariables(env.db, await sealerFor(env.dataDir), job.project_id);
        const environmentVariables = await jobEnvironmentVariables(env.db, job);
        return { job, token, variables, deployVariables, environmentVariables, persistentRef };
      }
    }
    if (batch.length < BATCH) break;
    afterId = batch[batch.length - 1].id;
  }
  return null;
}
