/**
 * The Service's Entities::Ci::Variable (15.2): `variable_type`, `key`, `value`, and what the model
 * has of `protected`, `masked`, `raw` and `environment_scope` — all of them for project and group
 * variables, no scope for instance variables, only type, key and value for a pipeline's.
 */
import { Type, type Static } from 'typebox';
import type { CiPipelineVariableRow } from '../../db/tables/ci-variables.ts';
import type { Variable } from '../../domain/ci-variables/change-variable.ts';

export const InstanceVariableSchema = Type.Object({
  variable_type: Type.String(),
  key: Type.String(),
  value: Type.String(),
  protected: Type.Boolean(),
  masked: Type.Boolean(),
  raw: Type.Boolean(),
}, { title: 'InstanceVariable' });

export const CiVariableSchema = Type.Object({
  ...InstanceVariableSchema.properties,
  environment_scope: Type.String(),
}, { title: 'Variable' });
export type CiVariable = Static<typeof CiVariableSchema>;

export const PipelineVariableSchema = Type.Object({
  variable_type: Type.String(),
  key: Type.String(),
  value: Type.String(),
}, { title: 'PipelineVariable' });

export function presentCiVariable(v: Variable): CiVariable {
  const r = v.row;
  return {
    variable_type: r.variable_type, key: r.key, value: v.value,
    protected: r.protected === 1, masked: r.masked === 1, raw: r.raw === 1, environment_scope: r.environment_scope,
  };
}

export function presentInstanceVariable(v: Variable): Static<typeof InstanceVariableSchema> {
  const { environment_scope: _scope, ...rest } = presentCiVariable(v);
  return rest;
}

export function presentPipelineVariable(row: CiPipelineVariableRow, value: string): Static<typeof PipelineVariableSchema> {
  return { variable_type: row.variable_type, key: row.key, value };
}
