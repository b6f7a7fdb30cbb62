/**
 * A pipeline's persistent ref (the Service 15.2's Ci::PersistentRef): `refs/pipelines/<id>` in the
 * project's repository at the pipeline's commit, so its jobs can fetch that commit after the
 * branch moved on, was force-pushed or was deleted.
 *
 * As in 15.2, the ref is written when a job of the pipeline starts running (Ci::Build's
 * pending → running transition, after its commit), offered to the runner first among the job's
 * refspecs while it exists (Ci::BuildRunnerPresenter#refspecs: `+refs/pipelines/<id>:refs/pipelines/<id>`),
 * and deleted when the pipeline completes (success, failed, canceled or skipped: Ci::Pipeline's
 * transition to a completed status). A pipeline waiting on a manual job is not completed and
 * keeps its ref, as there. A failure to write or delete the ref is not the job's: the Service
 * records it and goes on.
 *
 * The ref moves through `updateRefs` like every other ref kiln writes, so it is refused while a
 * storage move holds the repository read-only; it is not a branch, so no push event follows.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { refTarget } from '../repositories/git-read.ts';
import { projectRepository, updateRefs } from '../repositories/project-repository.ts';
import { ZERO_ID } from '../repositories/ref-names.ts';

export const PIPELINE_REFS = 'refs/pipelines/';

/** Repository::REF_PIPELINES: `refs/pipelines/<id>`. */
export function persistentRefPath(pipelineId: number): string {
  return `${PIPELINE_REFS}${pipelineId}`;
}

type Project = Pick<ProjectRow, 'id' | 'repository_storage' | 'disk_path'>;

/** The pipeline's ref at its commit, written if missing; whether it is there afterwards. */
export async function ensurePersistentRef(
  db: Kysely<DB>, storages: StorageShard[], project: Project, pipeline: { id: number; sha: string },
): Promise<boolean> {
  const repo = projectRepository(storages, project);
  const ref = persistentRefPath(pipeline.id);
  try {
    const current = await refTarget(repo.gitDir, ref);
    if (current === pipeline.sha) return true;
    const written = await updateRefs(db, repo, [{ ref, before: current ?? ZERO_ID, after: pipeline.sha }]);
    // Two jobs of the pipeline starting at once both write it: the one that lost finds it there.
    return written.ok || (await refTarget(repo.gitDir, ref)) === pipeline.sha;
  } catch {
    return false;
  }
}

/** Deletes the pipeline's ref if it exists (the pipeline completed, or is gone). */
export async function deletePersistentRef(db: Kysely<DB>, storages: StorageShard[], project: Project, pipelineId: number): Promise<void> {
  const repo = projectRepository(storages, project);
  const ref = persistentRefPath(pipelineId);
  try {
    const current = await refTarget(repo.gitDir, ref);
    if (current !== null) await updateRefs(db, repo, [{ ref, before: current, after: ZERO_ID }]);
  } catch {
    // The repository may be gone with its project; nothing is left to point anywhere.
  }
}

/** Whether `ref` is a pipeline's persistent ref, and which pipeline's. */
export function persistentRefPipelineId(ref: string): number | null {
  const m = /^refs\/pipelines\/(\d{1,10})$/.exec(ref);
  return m ? Number(m[1]) : null;
}
