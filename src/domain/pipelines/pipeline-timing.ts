/**
 * A pipeline's clock as the Service 15.2 keeps it (app/models/ci/pipeline.rb state machine;
 * lib/gitlab/ci/pipeline/duration.rb):
 * - `started_at` is set when the pipeline turns `running` from created, waiting_for_resource,
 *   preparing or pending, which happens only once one of its jobs has started: a pipeline
 *   canceled or failed before any job ran has none.
 * - `duration` is stored when the pipeline turns success, failed, canceled or manual (and has
 *   started): the union of its latest builds' running periods, so waiting between stages does
 *   not count, in whole seconds (the column is an integer, so Ruby's `to_i`: truncated).
 * - `queued_duration` is read, not stored: started_at − created_at in whole seconds, null before
 *   the start and when it comes to 0 (Ci::Pipeline#queued_duration).
 */
import { isoMillis } from '../clock.ts';

/** The statuses from which turning `running` stamps started_at anew. */
const STARTS_FROM = ['created', 'waiting_for_resource', 'preparing', 'pending'];
/** The statuses whose reaching stores the duration (update_duration). */
const TIMED_AT = ['success', 'failed', 'canceled', 'manual'];
/** The builds whose periods count (Duration.from_pipeline). */
const COUNTED = ['success', 'failed', 'running', 'canceled'];

export interface TimedJob {
  type: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface PipelineClock {
  status: string;
  started_at: string | null;
  duration: number | null;
}

/**
 * started_at after the pipeline moves from `before` to `status`. kiln's processor may see a
 * pipeline only after its first job already ended (a job picked and finished between two passes):
 * then the earliest start of its jobs stands in for the instant it turned running.
 */
export function startedAtAfter(before: PipelineClock, status: string, jobs: readonly TimedJob[], now: string): string | null {
  if (status === 'running' && (STARTS_FROM.includes(before.status) || before.started_at === null)) return now;
  if (before.started_at !== null) return before.started_at;
  const starts = jobs.map((j) => j.started_at).filter((s): s is string => s !== null).sort();
  return starts.length > 0 && status !== 'created' && status !== 'pending' ? starts[0] : null;
}

/** The duration to store once the pipeline moves from `before` to `status` (started at `startedAt`). */
export function durationAfter(
  before: PipelineClock, status: string, startedAt: string | null, jobs: readonly TimedJob[], nowMs: number,
): number | null {
  if (status === before.status || !TIMED_AT.includes(status) || startedAt === null) return before.duration;
  return runningSeconds(jobs, nowMs);
}

/** Whole seconds during which at least one of the latest builds ran (the union of their periods). */
export function runningSeconds(jobs: readonly TimedJob[], nowMs: number): number {
  const periods = jobs
    .filter((j) => j.type === 'build' && j.started_at !== null && COUNTED.includes(j.status))
    .map((j) => [isoMillis(j.started_at!), j.finished_at === null ? nowMs : isoMillis(j.finished_at)] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let current: [number, number] | null = null;
  for (const [first, last] of periods) {
    if (current && first <= current[1]) {
      current[1] = Math.max(current[1], last);
      continue;
    }
    if (current) total += current[1] - current[0];
    current = [first, last];
  }
  if (current) total += current[1] - current[0];
  return Math.trunc(total / 1000);
}

/** Ci::Pipeline#queued_duration: whole seconds from creation to start; null unstarted or 0. */
export function pipelineQueuedDuration(p: { created_at: string; started_at: string | null }): number | null {
  if (p.started_at === null) return null;
  const seconds = Math.trunc((isoMillis(p.started_at) - isoMillis(p.created_at)) / 1000);
  return seconds === 0 ? null : seconds;
}

/**
 * Ci::Pipeline#coverage: the mean of its latest jobs' coverage, written with two decimals (a
 * string, as the Service's `'%.2f' %` makes it); null when no job reported any.
 */
export function pipelineCoverage(coverages: readonly number[]): string | null {
  if (coverages.length === 0) return null;
  return (coverages.reduce((a, b) => a + b, 0) / coverages.length).toFixed(2);
}
