/**
 * A runner asks for work (Ci::RegisterJobService): the oldest pending build whose tags the runner
 * has (an untagged build only for runners that run untagged jobs) is claimed with an optimistic
 * pending → running transition, so two runners asking at once never get the same job. The job
 * gets a fresh job token, valid while it runs.
 */
import type { BuildRow, RunnerRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import { digest, generateToken } from '../tokens/secret.ts';
import { applyJobEvent, pendingBuilds } from '../jobs/jobs.queries.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { processPipeline } from '../pipelines/process-pipeline.ts';

const BATCH = 100;
/** How many pending jobs one request looks at before answering that nothing matches. */
const MAX_SCANNED = 2000;

export function runnerCanPick(runner: RunnerRow, job: BuildRow): boolean {
  const jobTags = job.tag_list === '' ? [] : job.tag_list.split(' ');
  if (jobTags.length === 0) return runner.run_untagged === 1;
  const runnerTags = new Set(runner.tag_list === '' ? [] : runner.tag_list.split(' '));
  return jobTags.every((t) => runnerTags.has(t));
}

export async function requestJob(env: CiEnv, runner: RunnerRow): Promise<{ job: BuildRow; token: string } | null> {
  if (!runner.active) return null;
  let afterId = 0;
  for (let scanned = 0; scanned < MAX_SCANNED; scanned += BATCH) {
    const batch = await pendingBuilds(env.db, afterId, BATCH);
    for (const candidate of batch) {
      if (!runnerCanPick(runner, candidate)) continue;
      const token = generateToken(20);
      const timeout = runner.maximum_timeout === null ? candidate.timeout : Math.min(candidate.timeout, runner.maximum_timeout);
      const job = await applyJobEvent(env.db, candidate, 'run', {
        runner_id: runner.id, token_digest: digest(token), started_at: nowIso(), timeout,
      });
      if (job) {
        await processPipeline(env, job.pipeline_id);
        return { job, token };
      }
    }
    if (batch.length < BATCH) break;
    afterId = batch[batch.length - 1].id;
  }
  return null;
}
