/** Pipeline schedules, their variables and plays (migration 2026-11-29T0300_pipeline_schedules). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface CiPipelineSchedulesTable {
  id: Generated<number>;
  project_id: number;
  owner_id: number | null;
  description: string;
  /** As given (branch or tag name). */
  ref: string;
  cron: string;
  /** An ActiveSupport time zone name or an IANA identifier, as given. */
  cron_timezone: string;
  /** ISO-8601 UTC; null only while inactive schedules were never given one. */
  next_run_at: string | null;
  active: Flag;
  created_at: string;
  updated_at: string;
}
export type PipelineScheduleRow = Selectable<CiPipelineSchedulesTable>;

export interface CiPipelineScheduleVariablesTable {
  id: Generated<number>;
  pipeline_schedule_id: number;
  key: string;
  encrypted_value: string;
  variable_type: string;
  created_at: string;
  updated_at: string;
}
export type PipelineScheduleVariableRow = Selectable<CiPipelineScheduleVariablesTable>;

export interface CiPipelineSchedulePlaysTable {
  pipeline_schedule_id: number;
  user_id: number;
  played_at: string;
}

declare module '../types.ts' {
  interface DB {
    ci_pipeline_schedules: CiPipelineSchedulesTable;
    ci_pipeline_schedule_variables: CiPipelineScheduleVariablesTable;
    ci_pipeline_schedule_plays: CiPipelineSchedulePlaysTable;
  }
}
