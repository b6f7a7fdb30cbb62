/**
 * `workflow:auto_cancel` (a keyword the Service added after 15.2; Ci::PipelineCreation::
 * CancelRedundantPipelinesService and the on_job_failure setting of Ci::Pipeline):
 *
 * - on_new_commit, read from each older pipeline of the branch: `conservative` cancels it when
 *   none of its jobs that are not `interruptible: true` has started yet; `interruptible` cancels
 *   only its interruptible jobs; `none` (and a pipeline whose configuration does not say) is left
 *   alone — kiln cancels nothing its configuration did not ask for.
 * - on_job_failure `all`: once a job fails (and may not), the pipeline's other created, pending
 *   and running jobs are canceled.
 */
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import { applyJobEvent, latestPipelineJobs } from '../jobs/jobs.queries.ts';
import type { CiEnv } from './ci-env.ts';
import { redundantPipelineCandidates } from './pipelines.queries.ts';

const CANCELABLE = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running'];

function interruptible(job: BuildRow): boolean {
  return (JSON.parse(job.options) as { interruptible?: boolean | null }).interruptible === true;
}

async function cancelJobs(env: CiEnv, jobs: BuildRow[]): Promise<boolean> {
  let changed = false;
  for (const job of jobs) {
    if (CANCELABLE.includes(job.status) && await applyJobEvent(env.db, job, 'cancel')) changed = true;
  }
  return changed;
}

/** The older pipelines of the new pipeline's branch that asked for it, canceled as each asked; returns their ids. */
export async function cancelRedundantPipelines(env: CiEnv, pipeline: PipelineRow): Promise<number[]> {
  if (pipeline.tag === 1) return [];
  const touched: number[] = [];
  for (const older of await redundantPipelineCandidates(env.db, pipeline)) {
    const jobs = await latestPipelineJobs(env.db, older.id);
    let targets: BuildRow[];
    if (older.auto_cancel_on_new_commit === 'interruptible') targets = jobs.filter(interruptible);
    else if (jobs.some((j) => !interruptible(j) && j.started_at !== null)) continue;
    else targets = jobs;
    if (await cancelJobs(env, targets)) touched.push(older.id);
  }
  return touched;
}

/** on_job_failure `all`: whether a failed job that may not fail canceled the others now. */
export async function cancelOnJobFailure(env: CiEnv, pipeline: PipelineRow, jobs: BuildRow[]): Promise<boolean> {
  if (pipeline.auto_cancel_on_job_failure !== 'all') return false;
  if (!jobs.some((j) => j.status === 'failed' && j.allow_failure === 0)) return false;
  return cancelJobs(env, jobs);
}
