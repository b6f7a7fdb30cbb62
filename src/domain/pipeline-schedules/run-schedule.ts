/**
 * Running a pipeline schedule (the Service's PipelineScheduleWorker, RunPipelineScheduleWorker and
 * Ci::PipelineSchedules::PlayService, 15.2):
 *
 * - `scheduleDueRuns` (every process's scheduler tick, server.ts) finds active schedules whose
 *   next_run_at has passed and claims each with one conditional UPDATE that moves next_run_at to
 *   the cron's next time after now and, in the same transaction, queues a run job. Of several
 *   processes (KILN_WORKERS, several instances on one database) exactly one claim succeeds; a
 *   schedule that missed many cron times while kiln was down runs once, not once per time missed.
 * - `queuePlay` (POST …/play) queues a run as the caller, at most once a minute per user and
 *   schedule (the Service's play_pipeline_schedule rate limit), and leaves next_run_at alone.
 * - The run job creates the pipeline (source `schedule`, linked to the schedule, its variables
 *   reaching the jobs through collect-variables.ts) as the schedule's owner, or the player. A user
 *   who may no longer create pipelines on the ref makes nothing (the Service logs the failure).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { JobQueue } from '../background-jobs/job-queue.ts';
import type { PipelineScheduleRow } from '../../db/tables/pipeline-schedules.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { Actor } from '../permissions/access.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import { projectActor } from '../permissions/actors.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { findUserById } from '../users/users.queries.ts';
import { protectionRulesFor, refActorFor } from '../protected-refs/protected-refs.ts';
import { canCreateTag, canMergeToBranch, canPushToBranch, isProtectedRef } from '../protected-refs/ref-rules.ts';
import { resolvePipelineVariables } from '../ci-variables/collect-variables.ts';
import { sealerFor } from '../ci-variables/encryption.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { createPipeline, projectGitDir } from '../pipelines/create-pipeline.ts';
import { resolveRef } from '../pipelines/git-source.ts';
import { nextRunAt } from './manage-schedules.ts';
import {
  claimScheduleRun, dueSchedules, findSchedule, recordPlay, schedulePipelineSince, scheduleVariables,
} from './pipeline-schedules.queries.ts';

export const RUN_SCHEDULE_JOB = 'pipeline_schedules.run';

export interface RunPayload {
  scheduleId: number;
  /** Who the pipeline runs as: the owner for a cron run, the caller for a play. */
  userId: number;
  /** When the run was queued: a retried job that finds a pipeline made since then makes none. */
  queuedAt: string;
}

/** Schedules claimed per tick; the rest wait for the next one. */
const BATCH = 100;
/** The Service's play_pipeline_schedule limit: one play a minute per user and schedule. */
const PLAY_WINDOW_MS = 60_000;

/**
 * ProjectPolicy / Ci::PipelineSchedulePolicy's protected_ref condition: the user may update the ref
 * (push or merge to a branch, create a tag) where it is protected.
 */
export async function mayRunOnRef(db: Kysely<DB>, actor: Actor, project: ProjectRow, ref: string, tag: boolean): Promise<boolean> {
  const rules = await protectionRulesFor(db, project.id);
  if (!isProtectedRef(rules, ref, tag)) return true;
  const refActor = refActorFor(actor, project);
  return tag ? canCreateTag(rules, refActor, ref) : canPushToBranch(rules, refActor, ref) || canMergeToBranch(rules, refActor, ref);
}

/** Whether the ref names a tag of the project's repository (the Service asks repository.tag_exists?). */
export async function refIsTag(env: CiEnv, project: ProjectRow, ref: string): Promise<boolean> {
  return (await resolveRef(projectGitDir(env, project), ref))?.tag ?? false;
}

/** One scheduler tick: claims every due schedule it can and queues its run; returns how many it claimed. */
export async function scheduleDueRuns(db: Kysely<DB>, jobs: JobQueue, now: Date = new Date()): Promise<number> {
  const nowText = now.toISOString();
  let claimed = 0;
  for (;;) {
    const due = await dueSchedules(db, nowText, BATCH);
    let won = 0;
    for (const s of due) if (await claimRun(db, jobs, s, now)) won += 1;
    claimed += won;
    // Rows another process claimed meanwhile no longer match; stop when a batch yielded nothing new.
    if (due.length < BATCH || won === 0) break;
  }
  if (claimed > 0) jobs.wake();
  return claimed;
}

/** Claims the run of `s` as read (its next_run_at then); false when another process claimed it first or it changed since. */
export async function claimRun(db: Kysely<DB>, jobs: JobQueue, s: PipelineScheduleRow, now: Date): Promise<boolean> {
  if (s.next_run_at === null) return false;
  // The next cron time after now, not after the missed one: a long downtime catches up once.
  const next = nextRunAt(s, now);
  return db.transaction().execute(async (trx) => {
    if (!await claimScheduleRun(trx, s.id, s.next_run_at!, next)) return false;
    // A schedule without an owner (its owner was deleted) moves on without running (the Service's
    // worker needs a user).
    if (s.owner_id !== null) {
      const payload: RunPayload = { scheduleId: s.id, userId: s.owner_id, queuedAt: now.toISOString() };
      await jobs.enqueue(RUN_SCHEDULE_JOB, payload, { trx });
    }
    return true;
  });
}

/** POST …/play: false when the user played this schedule less than a minute ago. */
export async function queuePlay(
  db: Kysely<DB>, jobs: JobQueue, schedule: PipelineScheduleRow, userId: number, now: Date = new Date(),
): Promise<boolean> {
  const queued = await db.transaction().execute(async (trx) => {
    const notBefore = new Date(now.getTime() - PLAY_WINDOW_MS).toISOString();
    if (!await recordPlay(trx, schedule.id, userId, now.toISOString(), notBefore)) return false;
    const payload: RunPayload = { scheduleId: schedule.id, userId, queuedAt: now.toISOString() };
    await jobs.enqueue(RUN_SCHEDULE_JOB, payload, { trx });
    return true;
  });
  if (queued) jobs.wake();
  return queued;
}

export type RunOutcome = { created: number } | { skipped: string };

/** The run job (RunPipelineScheduleWorker): creates the schedule's pipeline as the user. */
export async function runSchedule(env: CiEnv, p: RunPayload, attempt: number): Promise<RunOutcome> {
  const schedule = await findSchedule(env.db, p.scheduleId);
  if (!schedule) return { skipped: 'schedule deleted' };
  // A run whose job was taken over after its worker died may have made its pipeline already.
  if (attempt > 1 && await schedulePipelineSince(env.db, schedule.id, p.queuedAt)) return { skipped: 'already created' };
  const [user, project] = await Promise.all([findUserById(env.db, p.userId), findProjectById(env.db, schedule.project_id)]);
  if (!user || !project) return { skipped: 'user or project gone' };
  if (user.state !== 'active') return { skipped: 'user not active' };
  const lineage = (await namespacePathsById(env.db, [project.namespace_id])).get(project.namespace_id)?.lineage ?? [];
  const actor = await projectActor(env.db, user, project.id, lineage);
  if (!canOnProject(actor, 'update_build', project)) return { skipped: 'Insufficient permissions to create a new pipeline' };
  if (!await mayRunOnRef(env.db, actor, project, schedule.ref, await refIsTag(env, project, schedule.ref))) {
    return { skipped: 'Insufficient permissions for protected ref' };
  }
  const sealer = await sealerFor(env.dataDir);
  const own = (await scheduleVariables(env.db, schedule.id)).map((v) => ({
    key: v.key, value: sealer.open(v.encrypted_value), variable_type: v.variable_type,
  }));
  // `rules:if` sees the schedule's variables above the owners' ones, as its jobs do.
  const variables = await resolvePipelineVariables(env.db, env.dataDir, project, schedule.ref, own);
  const result = await createPipeline(env, {
    project, ref: schedule.ref, userId: user.id, source: 'schedule', variables, pipelineScheduleId: schedule.id,
  });
  if (!result.ok) return { skipped: result.error };
  return { created: result.pipeline.id };
}
