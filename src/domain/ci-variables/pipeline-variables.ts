/**
 * The variables a pipeline is created with (POST /projects/:id/pipeline `variables`, a trigger's
 * `variables`): checked before anything is written, stored sealed with the pipeline in its
 * creation transaction (Ci::PipelineVariable), read back by GET …/pipelines/:id/variables and by
 * the jobs of the pipeline.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { insertPipelineVariables } from './ci-variables.queries.ts';
import { sealerFor } from './encryption.ts';
import type { GivenVariable } from './collect-variables.ts';
import { MAX_VALUE, normaliseKey, validateKey } from './variable-rules.ts';

/** How many variables one pipeline may be given: bounds the insert (and its bound parameters). */
export const MAX_PIPELINE_VARIABLES = 1000;

/**
 * The given variables with their keys normalised, or the reasons they cannot be stored, as the
 * pipeline's base errors (the Service reports a pipeline it could not save under `base`).
 */
export function checkPipelineVariables(given: GivenVariable[]): { ok: true; variables: GivenVariable[] } | { ok: false; errors: string[] } {
  if (given.length > MAX_PIPELINE_VARIABLES) {
    return { ok: false, errors: [`Variables are too many (maximum is ${MAX_PIPELINE_VARIABLES})`] };
  }
  const messages = new Set<string>();
  const seen = new Set<string>();
  const variables = given.map((v) => ({ ...v, key: normaliseKey(v.key) }));
  for (const v of variables) {
    const errors = new ValidationErrors();
    validateKey(errors, v.key);
    for (const m of errors.errors.key ?? []) messages.add(`Variables key ${m}`);
    if (v.value.length > MAX_VALUE) messages.add(`Variables value exceeds the ${MAX_VALUE} character limit`);
    if (v.key !== '' && seen.has(v.key)) messages.add(`Duplicate variable name: ${v.key}`);
    seen.add(v.key);
  }
  return messages.size > 0 ? { ok: false, errors: [...messages] } : { ok: true, variables };
}

/** Inside the pipeline's creation transaction: its variables, sealed. */
export async function storePipelineVariables(
  trx: Transaction<DB>, dataDir: string, pipelineId: number, variables: GivenVariable[] | undefined,
): Promise<void> {
  if (!variables || variables.length === 0) return;
  const sealer = await sealerFor(dataDir);
  await insertPipelineVariables(trx, pipelineId, variables.map((v) => ({
    key: v.key, encrypted_value: sealer.seal(v.value), variable_type: v.variable_type ?? 'env_var',
  })));
}
