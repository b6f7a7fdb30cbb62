/**
 * The job state machine (the Service's CommitStatus / Ci::Build / Ci::Bridge state machines) as one
 * table: event → the states it may leave → the state it reaches. `transition()` is pure; the
 * queries apply a transition with `UPDATE … WHERE status = <from>`, so two concurrent events on one
 * job cannot both succeed from the same state and no transition is lost.
 *
 * Where each event comes from:
 * - enqueue: the pipeline engine when a job's stage (or its needs) allow it to run; play (manual → pending)
 * - actionize: the engine, for `when: manual` jobs that reached their turn (created → manual)
 * - skip: the engine, when earlier stages ended so that `when:` says the job must not run
 * - reset: a retry, for skipped jobs of later stages, so the engine weighs them again
 * - run: a runner picked the job (POST /jobs/request), or a bridge created its downstream pipeline
 * - succeed / drop: a runner reported success / failure (PUT /jobs/:id); the sweeper (drop with
 *   stuck_or_timeout_failure); a bridge mirroring its downstream pipeline
 * - cancel: POST …/cancel, or a bridge whose downstream pipeline was canceled
 */

export const JOB_STATUSES = ['created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export type JobEvent = 'enqueue' | 'actionize' | 'skip' | 'reset' | 'run' | 'succeed' | 'drop' | 'cancel';

export const TRANSITIONS: Record<JobEvent, { from: readonly JobStatus[]; to: JobStatus }> = {
  enqueue: { from: ['created', 'skipped', 'manual'], to: 'pending' },
  actionize: { from: ['created'], to: 'manual' },
  skip: { from: ['created'], to: 'skipped' },
  // A retry reopens the later stages that were skipped because of the job (Ci::ResetSkippedJobsService).
  reset: { from: ['skipped'], to: 'created' },
  run: { from: ['pending'], to: 'running' },
  succeed: { from: ['created', 'pending', 'running'], to: 'success' },
  drop: { from: ['created', 'pending', 'running', 'manual'], to: 'failed' },
  cancel: { from: ['created', 'pending', 'running', 'manual'], to: 'canceled' },
};

/** The state `event` leads to from `status`, or null when the event does not apply there. */
export function transition(status: string, event: JobEvent): JobStatus | null {
  const t = TRANSITIONS[event];
  return (t.from as readonly string[]).includes(status) ? t.to : null;
}

export const COMPLETED_STATUSES: readonly string[] = ['success', 'failed', 'canceled', 'skipped'];
export const isCompleted = (status: string) => COMPLETED_STATUSES.includes(status);
/** A job that may be retried: it ran to an end (Ci::Build#retryable?). */
export const isRetryable = (status: string) => status === 'success' || status === 'failed' || status === 'canceled';
