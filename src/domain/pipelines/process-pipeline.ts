/**
 * The pipeline engine (the Service's Ci::PipelineProcessing::AtomicProcessingService): moves each
 * `created` job on once what it waits for has ended, then derives the pipeline's status from its
 * jobs.
 *
 * A job waits for the jobs of all earlier stages, or only for its `needs:` (DAG). Their composite
 * status decides (Ci::ProcessBuildService#valid_statuses_for_build): on_success and manual jobs
 * run after success, on_failure jobs after failure, always jobs after either; a job whose
 * condition can no longer come true is skipped; manual jobs wait in `manual` to be played.
 *
 * Concurrency: every job change is an optimistic transition (jobs.queries applyJobEvent), so two
 * processors never both move a job. The pipeline's status is recomputed after it is written and
 * written again if jobs changed meanwhile, so the last writer always leaves the true status.
 * Within one process, runs for the same pipeline are queued behind each other; processing that
 * concerns other pipelines (downstream, upstream) is returned as follow-up work instead of being
 * awaited under the lock, so parent and child never wait on each other.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import { isoMillis, nowIso } from '../clock.ts';
import { applyJobEvent, latestPipelineJobs } from '../jobs/jobs.queries.ts';
import type { JobEvent } from '../jobs/state-machine.ts';
import { compositeStatus, PIPELINE_COMPLETED } from './composite-status.ts';
import { findPipeline, updatePipelineStatus } from './pipelines.queries.ts';
import { durationAfter, startedAtAfter } from './pipeline-timing.ts';
import type { CiEnv } from './ci-env.ts';
import { mirrorDownstream, triggerDownstream } from './bridges.ts';
import { pipelineCompleted } from './pipeline-hooks.ts';
import { cancelOnJobFailure } from './auto-cancel.ts';
import { executePipelineHooks } from '../web-hooks/pipeline-hooks.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { deletePersistentRef } from './persistent-ref.ts';

const VALID_PRIOR: Record<string, string[]> = {
  on_success: ['success', 'skipped'],
  manual: ['success', 'skipped'],
  on_failure: ['failed'],
  always: ['success', 'failed', 'skipped'],
};

/** What a created job does next given the status of what it waits for; null: keep waiting. */
export function decide(when: string, prior: string): JobEvent | null {
  if ((VALID_PRIOR[when] ?? VALID_PRIOR.on_success).includes(prior)) return when === 'manual' ? 'actionize' : 'enqueue';
  return PIPELINE_COMPLETED.includes(prior) ? 'skip' : null;
}

function priorStatus(job: BuildRow, jobs: BuildRow[]): string {
  if (job.needs !== null) {
    const names = JSON.parse(job.needs) as string[];
    // `needs: []` runs at once, as after a successful stage.
    if (names.length === 0) return 'success';
    return compositeStatus(jobs.filter((j) => names.includes(j.name)));
  }
  return compositeStatus(jobs.filter((j) => j.stage_idx < job.stage_idx));
}

/** One pass over the created jobs in stage order; returns whether anything moved. */
async function advanceJobs(env: CiEnv, jobs: BuildRow[]): Promise<boolean> {
  let changed = false;
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i];
    if (job.status !== 'created') continue;
    const event = decide(job.run_when, priorStatus(job, jobs));
    if (!event) continue;
    const updated = await applyJobEvent(env.db, job, event, event === 'enqueue' ? { queued_at: nowIso() } : {});
    if (updated) {
      jobs[i] = updated;
      changed = true;
    }
  }
  return changed;
}

async function writeStatus(env: CiEnv, pipelineId: number, jobs: BuildRow[]): Promise<{ before: string; after: string }> {
  const pipeline = (await findPipeline(env.db, pipelineId))!;
  const status = compositeStatus(jobs);
  const now = nowIso();
  const done = PIPELINE_COMPLETED.includes(status);
  // started_at only once a job started, the duration when it ends (pipeline-timing.ts).
  const startedAt = startedAtAfter(pipeline, status, jobs, now);
  const duration = durationAfter(pipeline, status, startedAt, jobs, isoMillis(now));
  const finishedAt = done ? pipeline.finished_at ?? now : null;
  const changed = status !== pipeline.status || finishedAt !== pipeline.finished_at || startedAt !== pipeline.started_at;
  if (changed || duration !== pipeline.duration) {
    await updatePipelineStatus(env.db, pipelineId, { status, started_at: startedAt, finished_at: finishedAt, duration });
  }
  // Every status transition runs the pipeline's webhooks (the Service's PipelineHooksWorker); a failure there is not the pipeline's.
  if (status !== pipeline.status) await executePipelineHooks(env, pipelineId).catch(() => undefined);
  // A pipeline that has just finished: its listeners (merge when pipeline succeeds) act on it.
  if (done && !PIPELINE_COMPLETED.includes(pipeline.status)) {
    // Its jobs are over: refs/pipelines/<id> goes (Ci::Pipeline's transition to a completed status).
    const project = await findProjectById(env.db, pipeline.project_id);
    if (project) await deletePersistentRef(env.db, env.storages, project, pipelineId);
    const completed = { id: pipelineId, projectId: pipeline.project_id, ref: pipeline.ref, sha: pipeline.sha, status,
      mergeRequestId: pipeline.merge_request_id,
    };
    await pipelineCompleted(env, completed, () => {});
  }
  return { before: pipeline.status, after: status };
}

async function processOnce(env: CiEnv, pipelineId: number): Promise<number[]> {
  const pipeline = await findPipeline(env.db, pipelineId);
  if (!pipeline) return [];
  const followUps: number[] = [];
  for (let round = 0; round < 50; round++) {
    const jobs = await latestPipelineJobs(env.db, pipelineId);
    if (await cancelOnJobFailure(env, pipeline, jobs)) continue;
    let changed = await advanceJobs(env, jobs);
    for (const bridge of jobs.filter((j) => j.type === 'bridge' && j.status === 'pending' && j.downstream_pipeline_id === null)) {
      const r = await triggerDownstream(env, bridge);
      followUps.push(...r.followUps);
      changed = changed || r.changed;
    }
    if (!changed) break;
  }
  let first: { before: string; after: string } | null = null;
  for (let check = 0; check < 5; check++) {
    const jobs = await latestPipelineJobs(env.db, pipelineId);
    const written = await writeStatus(env, pipelineId, jobs);
    first ??= written;
    // Re-read: a concurrent transition after our read would otherwise leave a stale status.
    if (compositeStatus(await latestPipelineJobs(env.db, pipelineId)) === written.after) break;
  }
  if (pipeline.upstream_bridge_id !== null) followUps.push(...await mirrorDownstream(env, pipeline.upstream_bridge_id, pipelineId));
  return followUps;
}

const queues = new Map<number, Promise<unknown>>();

function serialized<T>(pipelineId: number, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(pipelineId) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  queues.set(pipelineId, tail);
  void tail.then(() => { if (queues.get(pipelineId) === tail) queues.delete(pipelineId); });
  return run;
}

/** Processes a pipeline and whatever its changes touch (downstream and upstream pipelines). */
export async function processPipeline(env: CiEnv, pipelineId: number): Promise<void> {
  const work = [pipelineId];
  for (let steps = 0; work.length > 0 && steps < 200; steps++) {
    const id = work.shift()!;
    const more = await serialized(id, () => processOnce(env, id));
    for (const m of more) if (!work.includes(m)) work.push(m);
  }
}
