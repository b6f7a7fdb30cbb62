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

export class PipelineScheduler {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;
  readonly #db: Kysely<DB>;
  readonly #jobs: JobQueue;
  readonly #intervalMs: number;
  readonly #log: { error(obj: object, msg: string): void };

  constructor(db: Kysely<DB>, jobs: JobQueue, intervalSeconds: number, log: { error(obj: object, msg: string): void }) {
    this.#db = db;
    this.#jobs = jobs;
    this.#intervalMs = intervalSeconds * 1000;
    this.#log = log;
  }

  start(): void {
    if (this.#intervalMs === 0 || this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = scheduleDueRuns(this.#db, this.#jobs)
        .catch((err: unknown) => this.#log.error({ err }, 'pipeline schedule tick failed'))
        .finally(() => { this.#running = null; });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the interval and waits for a tick in progress, so the database can close after. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
