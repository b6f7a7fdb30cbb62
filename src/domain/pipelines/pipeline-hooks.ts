/**
 * Who hears that a pipeline finished (success, failed, canceled, skipped): areas that act on it
 * register a listener by name at start (merge requests that merge when their pipeline succeeds,
 * src/workers/merge-requests.worker.ts), so the pipeline engine never imports them. A listener's
 * failure is reported, never the pipeline's.
 */
import type { CiEnv } from './ci-env.ts';

export interface CompletedPipeline {
  id: number;
  projectId: number;
  ref: string;
  sha: string;
  status: string;
  /** A merge request pipeline's request (its ref is refs/merge-requests/:iid/head, not the branch). */
  mergeRequestId: number | null;
}

type Listener = (env: CiEnv, pipeline: CompletedPipeline) => Promise<void>;

const listeners = new Map<string, Listener>();

/** Registers (or replaces: one per name, however many apps a process builds) a listener. */
export function onPipelineCompleted(name: string, listener: Listener): void {
  listeners.set(name, listener);
}

export async function pipelineCompleted(env: CiEnv, pipeline: CompletedPipeline, onError: (err: unknown) => void): Promise<void> {
  for (const listener of listeners.values()) await listener(env, pipeline).catch(onError);
}
