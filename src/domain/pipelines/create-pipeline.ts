/**
 * Creates a pipeline (create-pipeline-rows.ts) and lets the engine start its first stage, as the
 * Service's Ci::CreatePipelineService does for pushes, the API, triggers and schedules.
 */
import type { CiEnv } from './ci-env.ts';
import { createPipelineRows, type CreatePipelineInput, type CreatePipelineResult } from './create-pipeline-rows.ts';
import { processPipeline } from './process-pipeline.ts';
import { cancelRedundantPipelines } from './auto-cancel.ts';

// What callers outside this folder read from here since before the rows had a module of their own.
export { CI_CONFIG_PATH, projectGitDir, type CreatePipelineInput, type CreatePipelineResult } from './create-pipeline-rows.ts';

export async function createPipeline(env: CiEnv, input: CreatePipelineInput): Promise<CreatePipelineResult> {
  const result = await createPipelineRows(env, input);
  if (!result.ok) return result;
  if (result.pipeline.status === 'created') await processPipeline(env, result.pipeline.id);
  for (const older of await cancelRedundantPipelines(env, result.pipeline)) await processPipeline(env, older);
  return result;
}
