/**
 * Pipeline schedules in the background (the Service's PipelineScheduleWorker cron and
 * RunPipelineScheduleWorker): the run job, and the scheduler every process ticks on an interval
 * (KILN_PIPELINE_SCHEDULE_INTERVAL). Ticks on several processes are safe: each due run is claimed
 * by one conditional update (domain/pipeline-schedules/run-schedule.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.ts';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import type { CiEnv } from '../domain/pipelines/ci-env.ts';
import { IntervalTask } from './interval-task.ts';
import { RUN_SCHEDULE_JOB, runSchedule, scheduleDueRuns, type RunPayload } from '../domain/pipeline-schedules/run-schedule.ts';

export function registerPipelineScheduleJobs(queue: JobQueue, env: CiEnv, log: { info(obj: object, msg: string): void }): void {
  queue.registerHandler(RUN_SCHEDULE_JOB, async (p: RunPayload, ctx) => {
    const outcome = await runSchedule(env, p, ctx.attempt);
    // As the Service logs a schedule's failed pipeline creation: nobody waits for the answer.
    if ('skipped' in outcome) {
      log.info({ scheduleId: p.scheduleId, userId: p.userId, reason: outcome.skipped }, 'pipeline schedule made no pipeline');
    }
  }, { maxAttempts: 3 });
}

/** The scheduler's tick every KILN_PIPELINE_SCHEDULE_INTERVAL seconds. */
export class PipelineScheduler extends IntervalTask {
  constructor(db: Kysely<DB>, jobs: JobQueue, intervalSeconds: number, log: { error(obj: object, msg: string): void }) {
    super(() => scheduleDueRuns(db, jobs), intervalSeconds, log, 'pipeline schedule tick failed');
  }
}
