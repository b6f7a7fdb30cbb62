/**
 * Background jobs of job artifacts (domain/jobs/job-artifacts.ts): removing a job's artifacts
 * once they expire, and deleting a whole project's artifacts after DELETE /projects/:id/artifacts.
 * Both are idempotent: a run taken over after a lost lease finds less or nothing to remove.
 */
import type { JobQueue } from '../domain/background-jobs/job-queue.ts';
import type { CiEnv } from '../domain/pipelines/ci-env.ts';
import {
  ARTIFACTS_EXPIRE_JOB, PROJECT_ARTIFACTS_DELETE_JOB, deleteProjectArtifacts, removeExpiredArtifacts,
} from '../domain/jobs/job-artifacts.ts';

export function registerArtifactJobs(queue: JobQueue, env: CiEnv): void {
  queue.registerHandler(ARTIFACTS_EXPIRE_JOB, async (p: { jobId: number }) => {
    await removeExpiredArtifacts(env, p.jobId);
  }, { maxAttempts: 5 });
  queue.registerHandler(PROJECT_ARTIFACTS_DELETE_JOB, async (p: { projectId: number; before: string }) => {
    await deleteProjectArtifacts(env, p.projectId, p.before);
  }, { maxAttempts: 5 });
}
