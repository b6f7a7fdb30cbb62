/**
 * kiln's job queue in the shapes of the Service's Sidekiq metrics (lib/api/sidekiq_metrics.rb):
 * kiln has one queue, `default`, served by the worker processes of every node.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { isoMillis, nowIso } from '../clock.ts';
import { jobRunCounters, liveWorkers, queueCounts } from './background-jobs.queries.ts';

/** The queue every job kind goes to. */
export const QUEUE_NAME = 'default';
/** A worker row older than this is a process that died (job-runner.ts renews it every minute). */
const WORKER_ALIVE_MS = 3 * 60_000;

export async function queueMetrics(db: Kysely<DB>) {
  const now = Date.now();
  const counts = await queueCounts(db, nowIso(new Date(now)));
  // Queue#latency: seconds the oldest due job has waited.
  const latency = counts.oldestRunAt ? Math.max(0, Math.floor((now - isoMillis(counts.oldestRunAt)) / 1000)) : 0;
  return { queues: { [QUEUE_NAME]: { backlog: counts.due, latency } } };
}

export async function processMetrics(db: Kysely<DB>) {
  const workers = await liveWorkers(db, nowIso(new Date(Date.now() - WORKER_ALIVE_MS)));
  return {
    processes: workers.map((w) => ({
      hostname: w.hostname, pid: w.pid, tag: 'kiln', started_at: w.started_at, queues: [QUEUE_NAME], labels: [] as string[],
      concurrency: w.concurrency, busy: Number(w.busy ?? 0),
    })),
  };
}

export async function jobStats(db: Kysely<DB>) {
  const [runs, counts] = await Promise.all([jobRunCounters(db), queueCounts(db, nowIso())]);
  return { jobs: { processed: runs.processed, failed: runs.failed, enqueued: counts.queued, dead: counts.dead } };
}

export async function compoundMetrics(db: Kysely<DB>) {
  const [queues, processes, jobs] = await Promise.all([queueMetrics(db), processMetrics(db), jobStats(db)]);
  return { ...queues, ...processes, ...jobs };
}
