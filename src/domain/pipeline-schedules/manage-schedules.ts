/**
 * Creating and changing pipeline schedules (Ci::CreatePipelineScheduleService and the model's
 * validations, app/models/ci/pipeline_schedule.rb, 15.2), and their variables
 * (Ci::PipelineScheduleVariable: Ci::HasVariable plus a key unique per schedule, here a unique index).
 *
 * next_run_at is the schedule's next cron time after now (CronSchedulable#set_next_run_at),
 * recomputed whenever the cron line or its time zone changes and when a schedule is activated.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { PipelineScheduleRow, PipelineScheduleVariableRow } from '../../db/tables/pipeline-schedules.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { ValidationErrors } from '../validation-errors.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import { MAX_VALUE, normaliseKey, validateKey } from '../ci-variables/variable-rules.ts';
import { cronTimezoneValid, cronValid, nextCronTime } from './cron.ts';
import {
  insertSchedule, insertScheduleVariable, updateSchedule as updateRow, updateScheduleVariable,
} from './pipeline-schedules.queries.ts';

/** description, ref and cron are varchar(255) columns in the Service; kiln says so before storing. */
const MAX_TEXT = 255;

export interface ScheduleAttributes {
  description: string;
  ref: string;
  cron: string;
  cron_timezone: string;
  active: boolean;
}

export type Result<T> = { ok: true; value: T } | { ok: false; errors: Record<string, string[]> };

function tooLong(errors: ValidationErrors, attr: string, value: string): void {
  if (value.length > MAX_TEXT) errors.add(attr, `is too long (maximum is ${MAX_TEXT} characters)`);
}

/** The model's validations, in its order: cron, cron_timezone, ref, description. */
export function scheduleErrors(a: ScheduleAttributes): ValidationErrors {
  const errors = new ValidationErrors();
  // The Service's cron validators add their text after the attribute's name: " is invalid syntax".
  if (!cronValid(a.cron)) errors.add('cron', ' is invalid syntax');
  if (a.cron.trim() === '') errors.add('cron', "can't be blank");
  if (!cronTimezoneValid(a.cron_timezone)) errors.add('cron_timezone', ' is invalid syntax');
  if (a.cron_timezone.trim() === '') errors.add('cron_timezone', "can't be blank");
  if (a.ref.trim() === '') errors.add('ref', "can't be blank");
  tooLong(errors, 'ref', a.ref);
  if (a.description.trim() === '') errors.add('description', "can't be blank");
  tooLong(errors, 'description', a.description);
  return errors;
}

export function nextRunAt(a: { cron: string; cron_timezone: string }, now: Date = new Date()): string | null {
  return nextCronTime(a.cron, a.cron_timezone, now)?.toISOString() ?? null;
}

export async function createSchedule(
  db: Kysely<DB>, projectId: number, ownerId: number, a: ScheduleAttributes,
): Promise<Result<PipelineScheduleRow>> {
  // strip_attributes! :cron
  const attrs = { ...a, cron: a.cron.trim() };
  const errors = scheduleErrors(attrs);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  const row = await insertSchedule(db, {
    project_id: projectId, owner_id: ownerId, description: attrs.description, ref: attrs.ref, cron: attrs.cron,
    cron_timezone: attrs.cron_timezone, active: attrs.active ? 1 : 0, next_run_at: nextRunAt(attrs),
  });
  return { ok: true, value: row };
}

export async function changeSchedule(
  db: Kysely<DB>, schedule: PipelineScheduleRow, patch: Partial<ScheduleAttributes>,
): Promise<Result<PipelineScheduleRow>> {
  const attrs: ScheduleAttributes = {
    description: patch.description ?? schedule.description,
    ref: patch.ref ?? schedule.ref,
    cron: (patch.cron ?? schedule.cron).trim(),
    cron_timezone: patch.cron_timezone ?? schedule.cron_timezone,
    active: patch.active ?? schedule.active === 1,
  };
  const errors = scheduleErrors(attrs);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  const row = await updateRow(db, schedule.id, {
    description: attrs.description, ref: attrs.ref, cron: attrs.cron, cron_timezone: attrs.cron_timezone,
    active: attrs.active ? 1 : 0,
    // "After the update is done, it is rescheduled" (the Service's API): the next cron time from now.
    next_run_at: nextRunAt(attrs),
  });
  if (!row) return { ok: false, errors: {} };
  return { ok: true, value: row };
}

// ---- variables

export interface VariableInput {
  key: string;
  value: string;
  variable_type: string;
}

function valueErrors(errors: ValidationErrors, value: string): void {
  if (value.length > MAX_VALUE) errors.add('value', `The value of the provided variable exceeds the ${MAX_VALUE} character limit`);
}

export async function createScheduleVariable(
  db: Kysely<DB>, sealer: Sealer, scheduleId: number, v: VariableInput,
): Promise<Result<PipelineScheduleVariableRow>> {
  const key = normaliseKey(v.key);
  const errors = new ValidationErrors();
  validateKey(errors, key);
  valueErrors(errors, v.value);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  try {
    const row = await insertScheduleVariable(db, {
      pipeline_schedule_id: scheduleId, key, encrypted_value: sealer.seal(v.value), variable_type: v.variable_type,
    });
    return { ok: true, value: row };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, errors: { key: ['has already been taken'] } };
  }
}

export async function changeScheduleVariable(
  db: Kysely<DB>, sealer: Sealer, variable: PipelineScheduleVariableRow, patch: { value?: string; variable_type?: string },
): Promise<Result<PipelineScheduleVariableRow>> {
  const errors = new ValidationErrors();
  if (patch.value !== undefined) valueErrors(errors, patch.value);
  if (!errors.empty) return { ok: false, errors: errors.errors };
  const row = await updateScheduleVariable(db, variable.id, {
    ...(patch.value !== undefined ? { encrypted_value: sealer.seal(patch.value) } : {}),
    ...(patch.variable_type !== undefined ? { variable_type: patch.variable_type } : {}),
  });
  return row ? { ok: true, value: row } : { ok: false, errors: {} };
}
