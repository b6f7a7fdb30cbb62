/**
 * The CI timeout sweeper (the Service's StuckCiJobsWorker): running jobs past their timeout and
 * pending jobs no runner took within KILN_CI_PENDING_TIMEOUT fail with stuck_or_timeout_failure.
 * Each drop is an optimistic transition, so a sweeper on every node (or a runner finishing the
 * job at that moment) never double-applies; the engine then moves each pipeline on.
 *
 * server.ts starts it on an interval and stops it on close; tests call sweepCi directly.
 */
import type { CiEnv } from '../domain/pipelines/ci-env.ts';
import { applyJobEvent, pendingJobsQueuedBefore, runningBuilds } from '../domain/jobs/jobs.queries.ts';
import { processPipeline } from '../domain/pipelines/process-pipeline.ts';
import type { BuildRow } from '../db/tables/ci.ts';
import { autoRetryWanted } from '../domain/runners/update-job-state.ts';
import { retryJob } from '../domain/jobs/job-actions.ts';
import { sweepEnvironments } from '../domain/environments/environment-actions.ts';
import { IntervalTask } from './interval-task.ts';

const BATCH = 200;

async function drop(env: CiEnv, job: BuildRow, now: Date, pipelines: Set<number>): Promise<boolean> {
  const dropped = await applyJobEvent(env.db, job, 'drop', { failure_reason: 'stuck_or_timeout_failure', finished_at: now.toISOString() });
  if (dropped) pipelines.add(job.pipeline_id);
  // `retry:` covers these failures too when its `when:` lists them (or `always`).
  if (dropped && await autoRetryWanted(env, dropped, 'stuck_or_timeout_failure')) await retryJob(env, dropped, dropped.user_id ?? 0);
  return dropped !== null;
}

/** One sweep; returns how many jobs it failed. */
export async function sweepCi(env: CiEnv, now: Date = new Date()): Promise<number> {
  const pipelines = new Set<number>();
  let failed = 0;
  for (let afterId = 0; ;) {
    const batch = await runningBuilds(env.db, afterId, BATCH);
    for (const job of batch) {
      const deadline = Date.parse(job.started_at ?? job.updated_at) + job.timeout * 1000;
      if (deadline < now.getTime() && await drop(env, job, now, pipelines)) failed += 1;
    }
    if (batch.length < BATCH) break;
    afterId = batch[batch.length - 1].id;
  }
  const queuedBefore = new Date(now.getTime() - env.pendingTimeout * 1000).toISOString();
  for (;;) {
    const batch = await pendingJobsQueuedBefore(env.db, queuedBefore, BATCH);
    let dropped = 0;
    for (const job of batch) if (await drop(env, job, now, pipelines)) dropped += 1;
    failed += dropped;
    if (batch.length < BATCH || dropped === 0) break;
  }
  for (const id of pipelines) await processPipeline(env, id);
  // Environments past auto_stop_at stop, scheduled review apps go (environment-actions.ts).
  await sweepEnvironments(env, now);
  return failed;
}

/** The sweep every KILN_CI_SWEEP_INTERVAL seconds. */
export class CiSweeper extends IntervalTask {
  constructor(env: CiEnv, intervalSeconds: number, log: { error(obj: object, msg: string): void }) {
    super(() => sweepCi(env), intervalSeconds, log, 'CI sweep failed');
  }
}
