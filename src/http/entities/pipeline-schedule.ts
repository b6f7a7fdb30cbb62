/**
 * The Service's Entities::Ci::PipelineSchedule and PipelineScheduleDetails (15.2): the schedule
 * with its owner (UserBasic); the details add `last_pipeline` (PipelineBasic) and `variables`
 * (Entities::Ci::Variable: variable_type, key, value), the variables only for those who may read
 * them (read_pipeline_schedule_variables: Maintainers, and the owner).
 */
import { Type, type Static } from 'typebox';
import type { PipelineScheduleRow, PipelineScheduleVariableRow } from '../../db/tables/pipeline-schedules.ts';
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { UserRow } from '../../db/types.ts';
import { UserBasicSchema, presentUserBasic } from './user.ts';
import { PipelineBasicSchema, presentPipelineBasic } from './pipeline.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const PipelineScheduleSchema = Type.Object({
  id: Type.Integer(),
  description: Type.String(),
  ref: Type.String(),
  cron: Type.String(),
  cron_timezone: Type.String(),
  next_run_at: NString,
  active: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
  owner: Type.Union([UserBasicSchema, Type.Null()]),
}, { title: 'PipelineSchedule' });

export const ScheduleVariableSchema = Type.Object({
  variable_type: Type.String(),
  key: Type.String(),
  value: Type.String(),
}, { title: 'PipelineScheduleVariable' });

export const PipelineScheduleDetailsSchema = Type.Object({
  ...PipelineScheduleSchema.properties,
  last_pipeline: Type.Union([PipelineBasicSchema, Type.Null()]),
  variables: Type.Optional(Type.Array(ScheduleVariableSchema)),
}, { title: 'PipelineScheduleDetails' });

export function presentSchedule(
  row: PipelineScheduleRow, owner: UserRow | null, externalUrl: string,
): Static<typeof PipelineScheduleSchema> {
  return {
    id: row.id,
    description: row.description,
    ref: row.ref,
    cron: row.cron,
    cron_timezone: row.cron_timezone,
    next_run_at: row.next_run_at,
    active: row.active === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    owner: owner ? presentUserBasic(owner, {}, { externalUrl, canReadProfile: false }) : null,
  };
}

export function presentScheduleVariable(row: PipelineScheduleVariableRow, value: string): Static<typeof ScheduleVariableSchema> {
  return { variable_type: row.variable_type, key: row.key, value };
}

export function presentScheduleDetails(
  row: PipelineScheduleRow, owner: UserRow | null, externalUrl: string,
  o: { lastPipeline: PipelineRow | null; projectWebUrl: string; variables: Static<typeof ScheduleVariableSchema>[] | null },
): Static<typeof PipelineScheduleDetailsSchema> {
  return {
    ...presentSchedule(row, owner, externalUrl),
    last_pipeline: o.lastPipeline ? presentPipelineBasic(o.lastPipeline, o.projectWebUrl) : null,
    ...(o.variables ? { variables: o.variables } : {}),
  };
}
