/**
 * The job queue other areas use: `registerHandler(kind, fn)` once at start, `enqueue(kind,
 * payload)` whenever work should happen outside the request. Jobs are rows (background-jobs
 * .queries.ts), so they survive crashes and any node's workers may run them; the runner
 * (src/workers/job-runner.ts) claims, leases, retries and gives up.
 *
 * Handlers must be idempotent: a job whose worker dies is run again once its lease expires.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Dialect } from '../../db/database.ts';
import { insertJob } from './background-jobs.queries.ts';

export interface JobContext {
  jobId: number;
  /** 1 on the first run; more after a retry or a takeover of an expired lease. */
  attempt: number;
  /** Aborted when the process stops or the lease was lost: stop work, leave state resumable. */
  signal: AbortSignal;
  /**
   * Renews the lease now and throws when it was lost: call it right before a step that must not
   * run twice (e.g. switching a repository's storage), so a worker whose lease was taken over
   * stops there.
   */
  holdLease(): Promise<void>;
}

export type JobHandler = (payload: any, ctx: JobContext) => Promise<void>;

export interface HandlerOptions {
  /** Runs (claims) before the job is given up; default 5. */
  maxAttempts?: number;
  /** Called once when the job is given up, to leave its records in a final state. */
  onGiveUp?: (payload: any, lastError: string) => Promise<void>;
}

export interface RegisteredHandler extends HandlerOptions {
  run: JobHandler;
}

export class JobQueue {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  readonly #handlers = new Map<string, RegisteredHandler>();
  readonly #wakeListeners = new Set<() => void>();

  constructor(db: Kysely<DB>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  registerHandler(kind: string, run: JobHandler, options: HandlerOptions = {}): void {
    if (this.#handlers.has(kind)) throw new Error(`a handler for job kind "${kind}" is already registered`);
    this.#handlers.set(kind, { run, ...options });
  }

  handler(kind: string): RegisteredHandler | undefined {
    return this.#handlers.get(kind);
  }

  kinds(): string[] {
    return [...this.#handlers.keys()];
  }

  /**
   * Queues a job. Inside a transaction (`trx`), the job commits or rolls back with the rows that
   * asked for it; call `wake()` after the commit so this process's workers start at once.
   */
  async enqueue(kind: string, payload: unknown, o: { trx?: Transaction<DB>; runAt?: Date } = {}): Promise<number> {
    const row = await insertJob(o.trx ?? this.db, { kind, payload, runAt: o.runAt, maxAttempts: this.#handlers.get(kind)?.maxAttempts });
    if (!o.trx) this.wake();
    return row.id;
  }

  /** Tells this process's idle workers to look for due jobs now instead of at the next poll. */
  wake(): void {
    for (const listener of this.#wakeListeners) listener();
  }

  onWake(listener: () => void): () => void {
    this.#wakeListeners.add(listener);
    return () => this.#wakeListeners.delete(listener);
  }
}
