/**
 * An external CI system reports a commit's status (POST /projects/:id/statuses/:sha; the
 * Service's lib/api/commit_statuses.rb with Ci::Pipelines::AddJobService). As in the Service the
 * status is a job of a pipeline, so it shows wherever pipelines do (the commit's last pipeline,
 * the pipelines list, the pipeline's status):
 *
 * - the pipeline is the newest of the commit (of `ref`, with id `pipeline_id`, when given), or a
 *   new one of source `external` when there is none;
 * - the ref is the one given, else that pipeline's, else the first branch containing the commit;
 * - the caller's status of that name and ref that is still pending or running is moved on,
 *   otherwise a new one (type `generic`, stage `external`) is created;
 * - the state is reached through CommitStatus's state machine (jobs/state-machine.ts): `pending`
 *   enqueues, `running` enqueues when it can and runs, `success`, `failed` (failure reason
 *   api_failure), `canceled`; an event that does not apply is refused in the state machine's words;
 * - older statuses of the same name in the pipeline become retried, and the pipeline's status is
 *   derived again from its latest jobs (process-pipeline.ts).
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { BuildRow, PipelineRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';
import { transition, type JobEvent } from '../jobs/state-machine.ts';
import { refsContaining } from '../repositories/commit-diff.ts';
import { repositoryPath } from '../repositories/storage.ts';
import { BLANK_SHA, readCommit } from './git-source.ts';
import { insertPipelineWithJobs } from './pipelines.queries.ts';
import {
  insertGenericStatus, moveGenericStatus, newestCommitPipeline, openGenericStatus, retryOlderStatuses,
} from './commit-statuses.queries.ts';
import { processPipeline } from './process-pipeline.ts';
import type { CiEnv } from './ci-env.ts';

export const STATUS_STATES = ['pending', 'running', 'success', 'failed', 'canceled'] as const;
export type StatusState = (typeof STATUS_STATES)[number];

/** GenericCommitStatus::EXTERNAL_STAGE_IDX: external statuses come after every stage of a pipeline's own. */
export const EXTERNAL_STAGE_IDX = 1_000_000;

export interface StatusReport {
  project: ProjectRow;
  commitId: string;
  state: StatusState;
  ref?: string;
  pipelineId?: number;
  name: string;
  /** Only the attributes given are written (attributes_for_keys). */
  targetUrl?: string;
  description?: string;
  coverage?: number;
  userId: number;
}

export type StatusResult =
  | { ok: true; status: BuildRow; pipeline: PipelineRow }
  | { ok: false; reason: 'no_ref' }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> }
  | { ok: false; reason: 'transition'; message: string };

/** The Service's event names (CommitStatus) and kiln's (state-machine.ts) for each. */
const EVENTS: Record<StatusState, { event: string; kiln: JobEvent; strict: boolean }[]> = {
  pending: [{ event: 'enqueue', kiln: 'enqueue', strict: true }],
  running: [{ event: 'enqueue', kiln: 'enqueue', strict: false }, { event: 'run', kiln: 'run', strict: true }],
  success: [{ event: 'success', kiln: 'succeed', strict: true }],
  failed: [{ event: 'drop', kiln: 'drop', strict: true }],
  canceled: [{ event: 'cancel', kiln: 'cancel', strict: true }],
};

class Refused extends Error {}
class Raced extends Error {}

/** GenericCommitStatus's `target_url` validation (addressable_url with its default options, at most 255 characters). */
function targetUrlErrors(url: string): string[] {
  const errors: string[] = [];
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    errors.push('is blocked: URI is invalid');
  }
  if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    errors.push('is blocked: Only allowed schemes are http, https');
  }
  if (url.length > 255) errors.push('is too long (maximum is 255 characters)');
  return errors;
}

/** The state the events reach from `from`, with the timestamps CommitStatus's transitions stamp. */
function plan(from: string, state: StatusState, now: string) {
  let status = from;
  const set: { queued_at?: string; started_at?: string; finished_at?: string; failure_reason?: string } = {};
  for (const step of EVENTS[state]) {
    const to = transition(status, step.kiln);
    if (to === null) {
      if (!step.strict) continue;
      // StateMachines::InvalidTransition's message.
      throw new Refused(`Cannot transition status via :${step.event} from :${status} (Reason(s): Status cannot transition via "${step.event}")`);
    }
    if (to === 'pending') set.queued_at = now;
    if (to === 'running') set.started_at = now;
    if (to === 'success' || to === 'failed' || to === 'canceled') set.finished_at = now;
    if (to === 'failed') set.failure_reason = 'api_failure';
    status = to;
  }
  return { status, set };
}

export async function postCommitStatus(env: CiEnv, r: StatusReport): Promise<StatusResult> {
  const { db } = env;
  if (r.targetUrl !== undefined) {
    const errors = targetUrlErrors(r.targetUrl);
    if (errors.length > 0) return { ok: false, reason: 'invalid', errors: { target_url: errors } };
  }
  const gitDir = repositoryPath(env.storages, r.project.repository_storage, r.project.disk_path);
  const found = await newestCommitPipeline(db, r.project.id, r.commitId, { ref: r.ref, pipelineId: r.pipelineId });
  const ref = r.ref ?? found?.ref ?? (await refsContaining(gitDir, r.commitId, 'refs/heads/'))[0];
  if (ref === undefined) return { ok: false, reason: 'no_ref' };
  const commitData = found ? null : JSON.stringify(await readCommit(gitDir, r.commitId));
  const attributes = {
    ...(r.targetUrl !== undefined ? { target_url: r.targetUrl } : {}),
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.coverage !== undefined ? { coverage: r.coverage } : {}),
  };

  for (let attempt = 0; ; attempt++) {
    try {
      const written = await db.transaction().execute(async (trx) => {
        const pipeline = found ?? await insertPipelineWithJobs(trx, {
          project_id: r.project.id, ref, tag: 0, sha: r.commitId, before_sha: BLANK_SHA, source: 'external', status: 'created',
          user_id: r.userId, upstream_bridge_id: null, config_path: '', commit_data: commitData!,
          started_at: null, finished_at: null,
        }, []);
        const now = nowIso();
        const open = await openGenericStatus(trx, pipeline.id, r.name, ref, r.userId);
        const current = open ?? await insertGenericStatus(trx, {
          type: 'generic', project_id: r.project.id, pipeline_id: pipeline.id, name: r.name, stage: 'external',
          stage_idx: EXTERNAL_STAGE_IDX, status: 'created', run_when: 'on_success', allow_failure: 0, failure_reason: null,
          ref, tag: 0, user_id: r.userId, runner_id: null, token_digest: null, options: '{}', yaml_variables: '[]',
          job_variables: '[]', tag_list: '', needs: null, timeout: 0, downstream_pipeline_id: null, queued_at: null,
          started_at: null, finished_at: null, erased_at: null, artifacts_expire_at: null, ...attributes,
        });
        const next = plan(current.status, r.state, now);
        const status = await moveGenericStatus(trx, current.id, current.status, { ...attributes, ...next.set, status: next.status });
        if (!status) throw new Raced();
        await retryOlderStatuses(trx, pipeline.id, r.name, status.id);
        return { status, pipeline };
      });
      await processPipeline(env, written.pipeline.id);
      const pipeline = (await newestCommitPipeline(db, r.project.id, r.commitId, { pipelineId: written.pipeline.id })) ?? written.pipeline;
      return { ok: true, status: written.status, pipeline };
    } catch (err) {
      if (err instanceof Refused) return { ok: false, reason: 'transition', message: err.message };
      // Another report moved the same status meanwhile: read it again (Gitlab::OptimisticLocking.retry_lock).
      if (err instanceof Raced && attempt < 3) continue;
      throw err;
    }
  }
}
