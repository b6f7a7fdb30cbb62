/**
 * A pipeline's duration, stored as the Service stores it (ci_pipelines.duration, an integer of
 * seconds written when the pipeline finishes; src/domain/pipelines/pipeline-timing.ts), where it
 * used to be computed on every read as finished_at − started_at, which counted the time between
 * stages and came out fractional.
 *
 * Pipelines that already exist get theirs from their jobs as the Service would have computed it:
 * the union of the running periods of their latest builds, truncated to whole seconds. Those that
 * were stamped started_at though none of their jobs ever started (canceled or failed before a
 * runner took anything) lose that stamp, which the Service never gives them.
 */
import type { Kysely } from 'kysely';

const BATCH = 500;
const COUNTED = ['success', 'failed', 'running', 'canceled'];

/** Whole seconds covered by the union of `periods` ([start, end] in ms). */
function unionSeconds(periods: [number, number][]): number {
  periods.sort((a, b) => a[0] - b[0]);
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

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines').addColumn('duration', 'integer').execute();
  let after = 0;
  for (;;) {
    const pipelines: { id: number; status: string; started_at: string | null; updated_at: string }[] = await db.selectFrom('ci_pipelines')
      .select(['id', 'status', 'started_at', 'updated_at']).where('id', '>', after).where('started_at', 'is not', null)
      .orderBy('id').limit(BATCH).execute();
    if (pipelines.length === 0) break;
    after = pipelines[pipelines.length - 1].id;
    const ids = pipelines.map((p) => p.id);
    type Job = {
      pipeline_id: number; type: string; status: string; retried: number; started_at: string | null; finished_at: string | null;
    };
    const jobs: Job[] =
      await db.selectFrom('ci_builds').select(['pipeline_id', 'type', 'status', 'retried', 'started_at', 'finished_at'])
        .where('pipeline_id', 'in', ids).where('started_at', 'is not', null).execute();
    for (const p of pipelines) {
      const own = jobs.filter((j) => j.pipeline_id === p.id);
      if (own.length === 0) {
        await db.updateTable('ci_pipelines').set({ started_at: null }).where('id', '=', p.id).execute();
        continue;
      }
      if (!['success', 'failed', 'canceled', 'manual'].includes(p.status)) continue;
      // A build still running in a finished pipeline counts to the pipeline's last change.
      const end = Date.parse(p.updated_at);
      const periods = own.filter((j) => j.type === 'build' && Number(j.retried) === 0 && COUNTED.includes(j.status))
        .map((j): [number, number] => [Date.parse(j.started_at!), j.finished_at === null ? end : Date.parse(j.finished_at)]);
      await db.updateTable('ci_pipelines').set({ duration: unionSeconds(periods) }).where('id', '=', p.id).execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines').dropColumn('duration').execute();
}
