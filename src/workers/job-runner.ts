/**
 * In-process workers for the job queue (DESIGN, Stack: background work). One loop claims due
 * jobs up to `concurrency` at a time, polling every `pollMs` and at once when this process
 * enqueues. While a job runs its lease is renewed every third of `leaseMs`; if the process dies
 * the lease runs out and any node takes the job over (claimJob). A failed attempt is retried
 * with exponential backoff until the handler's attempts are used up, then given up (`dead`).
 *
 * stop() is graceful: no new claims, running handlers are aborted through their signal, and
 * their jobs are handed back to the queue unchanged so the next start resumes them.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import type { BackgroundJobRow } from '../db/tables/background-jobs.ts';
import {
  beatWorker, buryJob, claimJob, countJobRuns, deleteFinishedJob, extendLease, releaseJob, removeWorkers, requeueJob,
} from '../domain/background-jobs/background-jobs.queries.ts';
import { nowIso } from '../domain/clock.ts';

/**
 * A running JobRunner renews its row in background_job_workers this often; rows older than
 * WORKER_STALE_MS are processes that died without saying so (GET /sidekiq/process_metrics).
 */
export const WORKER_HEARTBEAT_MS = 60_000;
export const WORKER_STALE_MS = 3 * WORKER_HEARTBEAT_MS;

export interface RunnerOptions {
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  /** First retry delay; doubled per attempt, capped at 10 minutes. */
  retryBaseMs?: number;
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

const MAX_RETRY_DELAY_MS = 10 * 60_000;

class LeaseLost extends Error {}
class Stopping extends Error {}

export class JobRunner {
  readonly owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  readonly #queue: JobQueue;
  readonly #o: RunnerOptions;
  readonly #running = new Map<number, { controller: AbortController; done: Promise<void> }>();
  #state: 'idle' | 'running' | 'stopping' = 'idle';
  #loop: Promise<void> | null = null;
  #wakeUp: (() => void) | null = null;
  #woken = false;
  #unsubscribe: (() => void) | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  readonly #startedAt = nowIso();

  constructor(queue: JobQueue, options: RunnerOptions) {
    this.#queue = queue;
    this.#o = options;
  }

  /** Starts the workers; resolves once the process has announced itself (its first heartbeat written). */
  start(): Promise<void> {
    if (this.#state !== 'idle' || this.#o.concurrency <= 0) return Promise.resolve();
    this.#state = 'running';
    this.#unsubscribe = this.#queue.onWake(() => this.#kick());
    this.#loop = this.#run();
    // Announced for the process metrics: one small write a minute, not one per poll.
    const beat = () => {
      const db = this.#queue.db;
      return beatWorker(db, {
        owner: this.owner, hostname: os.hostname(), pid: process.pid, concurrency: this.#o.concurrency, startedAt: this.#startedAt,
      }).then(() => removeWorkers(db, { staleBefore: nowIso(new Date(Date.now() - WORKER_STALE_MS)) }))
        .catch((err: unknown) => this.#o.log.warn({ err }, 'background jobs: announcing the worker failed'));
    };
    // The heartbeat is a write (it moves the write epoch): the first one is over before start
    // resolves, so nothing that begins after the start sees a write it did not make.
    const first = beat();
    this.#heartbeat = setInterval(() => { void beat(); }, WORKER_HEARTBEAT_MS);
    this.#heartbeat.unref();
    return first;
  }

  async stop(): Promise<void> {
    if (this.#state !== 'running') return;
    this.#state = 'stopping';
    this.#unsubscribe?.();
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#kick();
    await this.#loop;
    for (const { controller } of this.#running.values()) controller.abort(new Stopping('the worker is stopping'));
    await Promise.all([...this.#running.values()].map((r) => r.done));
    await removeWorkers(this.#queue.db, { owner: this.owner }).catch(() => undefined);
  }

  #kick(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  async #run(): Promise<void> {
    while (this.#state === 'running') {
      this.#woken = false;
      while (this.#state === 'running' && this.#running.size < this.#o.concurrency) {
        let job: BackgroundJobRow | null;
        try {
          job = await claimJob(this.#queue.db, this.#queue.dialect, {
            owner: this.owner, leaseMs: this.#o.leaseMs, kinds: this.#queue.kinds(),
          });
        } catch (err) {
          this.#o.log.error({ err }, 'background jobs: claiming failed');
          break;
        }
        if (!job) break;
        if (this.#state !== 'running') {
          await releaseJob(this.#queue.db, job.id, this.owner).catch(() => undefined);
          break;
        }
        this.#start(job);
      }
      if (this.#woken || this.#state !== 'running') continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#o.pollMs);
        this.#wakeUp = () => { clearTimeout(timer); resolve(); };
      });
      this.#wakeUp = null;
    }
  }

  #start(job: BackgroundJobRow): void {
    const controller = new AbortController();
    const done = this.#execute(job, controller).finally(() => {
      this.#running.delete(job.id);
      this.#kick();
    });
    this.#running.set(job.id, { controller, done });
  }

  async #execute(job: BackgroundJobRow, controller: AbortController): Promise<void> {
    const { db } = this.#queue;
    const handler = this.#queue.handler(job.kind);
    const heartbeat = setInterval(() => {
      extendLease(db, job.id, this.owner, this.#o.leaseMs).then((held) => {
        if (!held) controller.abort(new LeaseLost(`job ${job.id}: lease lost`));
      }, (err: unknown) => this.#o.log.warn({ err, jobId: job.id }, 'background jobs: renewing a lease failed'));
    }, Math.max(50, Math.floor(this.#o.leaseMs / 3)));
    const payload: unknown = JSON.parse(job.payload);
    try {
      if (!handler) throw new Error(`no handler for job kind "${job.kind}"`);
      if (job.attempts > job.max_attempts) {
        // The last allowed run ended without finishing (its worker died): give up now.
        await this.#giveUp(job, payload, job.last_error ?? 'the job was interrupted too many times');
        return;
      }
      const holdLease = async () => {
        if (!(await extendLease(db, job.id, this.owner, this.#o.leaseMs))) controller.abort(new LeaseLost(`job ${job.id}: lease lost`));
        controller.signal.throwIfAborted();
      };
      await handler.run(payload, { jobId: job.id, attempt: job.attempts, signal: controller.signal, holdLease });
      await deleteFinishedJob(db, job.id, this.owner);
      await countJobRuns(db, ['processed']).catch(() => undefined);
    } catch (err) {
      const reason = controller.signal.reason;
      if (reason instanceof Stopping) {
        await releaseJob(db, job.id, this.owner).catch(() => undefined);
        return;
      }
      if (reason instanceof LeaseLost) return; // another worker owns the job now
      const message = err instanceof Error ? err.message : String(err);
      this.#o.log.error({ err, jobId: job.id, kind: job.kind, attempt: job.attempts }, 'background job failed');
      // Sidekiq counts a failed run both as processed and as failed.
      await countJobRuns(db, ['processed', 'failed']).catch(() => undefined);
      try {
        if (job.attempts >= job.max_attempts) {
          await this.#giveUp(job, payload, message);
        } else {
          const delay = Math.min(MAX_RETRY_DELAY_MS, (this.#o.retryBaseMs ?? 1000) * 2 ** (job.attempts - 1));
          await requeueJob(db, job.id, this.owner, new Date(Date.now() + delay), message);
        }
      } catch (inner) {
        this.#o.log.error({ err: inner, jobId: job.id }, 'background jobs: recording a failure failed');
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  async #giveUp(job: BackgroundJobRow, payload: unknown, lastError: string): Promise<void> {
    await this.#queue.handler(job.kind)?.onGiveUp?.(payload, lastError);
    await buryJob(this.#queue.db, job.id, this.owner, lastError);
  }
}
