/** Every Kysely call about pipeline schedules, their variables and plays. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {
  CiPipelineSchedulesTable, PipelineScheduleRow, PipelineScheduleVariableRow,
} from '../../db/tables/pipeline-schedules.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function projectSchedulesQuery(db: Db, projectId: number, scope?: 'active' | 'inactive') {
  let q = db.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', projectId);
  if (scope) q = q.where('active', '=', scope === 'active' ? 1 : 0);
  return q.orderBy('id');
}

export function findScheduleInProject(db: Db, projectId: number, id: number): Promise<PipelineScheduleRow | undefined> {
  return db.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export function findSchedule(db: Db, id: number): Promise<PipelineScheduleRow | undefined> {
  return db.selectFrom('ci_pipeline_schedules').selectAll().where('id', '=', id).executeTakeFirst();
}

export type NewSchedule = Omit<CiPipelineSchedulesTable, 'id' | 'created_at' | 'updated_at'>;

export function insertSchedule(db: Db, s: NewSchedule): Promise<PipelineScheduleRow> {
  const now = nowIso();
  return db.insertInto('ci_pipeline_schedules').values({ ...s, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export function updateSchedule(db: Db, id: number, patch: Partial<NewSchedule>): Promise<PipelineScheduleRow | undefined> {
  return db.updateTable('ci_pipeline_schedules').set({ ...patch, updated_at: nowIso() }).where('id', '=', id)
    .returningAll().executeTakeFirst();
}

export async function deleteSchedule(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_pipeline_schedules').where('id', '=', id).execute();
}

/** The newest pipeline each schedule made (Ci::PipelineSchedule#last_pipeline). */
export async function lastPipelines(db: Db, scheduleIds: number[]): Promise<Map<number, PipelineRow>> {
  const out = new Map<number, PipelineRow>();
  for (const id of scheduleIds) {
    const row = await db.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', id)
      .orderBy('id', 'desc').limit(1).executeTakeFirst();
    if (row) out.set(id, row);
  }
  return out;
}

export function schedulePipelinesQuery(db: Db, scheduleId: number) {
  return db.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', scheduleId).orderBy('id');
}

/** Whether the schedule made a pipeline at or after `since` (a retried run job looks before creating another). */
export async function schedulePipelineSince(db: Db, scheduleId: number, since: string): Promise<boolean> {
  const row = await db.selectFrom('ci_pipelines').select('id').where('pipeline_schedule_id', '=', scheduleId)
    .where('created_at', '>=', since).orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row !== undefined;
}

// ---- variables

export function scheduleVariables(db: Db, scheduleId: number): Promise<PipelineScheduleVariableRow[]> {
  return db.selectFrom('ci_pipeline_schedule_variables').selectAll().where('pipeline_schedule_id', '=', scheduleId).orderBy('id').execute();
}

/** The variables of the schedule that made a pipeline, for its jobs (none for other pipelines). */
export function scheduleVariablesOfPipeline(db: Db, pipelineId: number): Promise<PipelineScheduleVariableRow[]> {
  return db.selectFrom('ci_pipeline_schedule_variables')
    .innerJoin('ci_pipelines', 'ci_pipelines.pipeline_schedule_id', 'ci_pipeline_schedule_variables.pipeline_schedule_id')
    .selectAll('ci_pipeline_schedule_variables').where('ci_pipelines.id', '=', pipelineId)
    .orderBy('ci_pipeline_schedule_variables.id').execute();
}

export function findScheduleVariable(db: Db, scheduleId: number, key: string): Promise<PipelineScheduleVariableRow | undefined> {
  return db.selectFrom('ci_pipeline_schedule_variables').selectAll()
    .where('pipeline_schedule_id', '=', scheduleId).where('key', '=', key).executeTakeFirst();
}

export function insertScheduleVariable(
  db: Db, v: { pipeline_schedule_id: number; key: string; encrypted_value: string; variable_type: string },
): Promise<PipelineScheduleVariableRow> {
  const now = nowIso();
  return db.insertInto('ci_pipeline_schedule_variables').values({ ...v, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

export function updateScheduleVariable(
  db: Db, id: number, patch: { encrypted_value?: string; variable_type?: string },
): Promise<PipelineScheduleVariableRow | undefined> {
  return db.updateTable('ci_pipeline_schedule_variables').set({ ...patch, updated_at: nowIso() }).where('id', '=', id)
    .returningAll().executeTakeFirst();
}

export async function deleteScheduleVariable(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_pipeline_schedule_variables').where('id', '=', id).execute();
}

// ---- the scheduler

/** Active schedules whose next run is due, oldest first. */
export function dueSchedules(db: Db, now: string, limit: number): Promise<PipelineScheduleRow[]> {
  return db.selectFrom('ci_pipeline_schedules').selectAll().where('active', '=', 1).where('next_run_at', '<=', now)
    .orderBy('next_run_at').limit(limit).execute();
}

/**
 * Takes a due run: moves next_run_at on only while it still holds the value the scheduler read,
 * so of several processes racing for the same run exactly one sees a row changed.
 */
export async function claimScheduleRun(trx: Db, id: number, seen: string, next: string | null): Promise<boolean> {
  const result = await trx.updateTable('ci_pipeline_schedules').set({ next_run_at: next })
    .where('id', '=', id).where('active', '=', 1).where('next_run_at', '=', seen).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records a play of the schedule by the user unless the last one was after `notBefore`: one
 * conditional upsert, so two requests at once (on any process) cannot both pass.
 */
export async function recordPlay(db: Db, scheduleId: number, userId: number, at: string, notBefore: string): Promise<boolean> {
  const row = await db.insertInto('ci_pipeline_schedule_plays').values({ pipeline_schedule_id: scheduleId, user_id: userId, played_at: at })
    .onConflict((oc) => oc.columns(['pipeline_schedule_id', 'user_id']).doUpdateSet({ played_at: at })
      .where('ci_pipeline_schedule_plays.played_at', '<=', notBefore))
    .returning('played_at').executeTakeFirst();
  return row !== undefined;
}
