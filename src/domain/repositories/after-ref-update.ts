/**
 * What follows every ref change made through the API (a commit, a new branch or tag, a
 * deletion), as after a push (src/git/smart-http.ts): the project records its default branch,
 * README and activity, the push events are recorded and the push pipelines start (the Service runs Git::BranchPushService for
 * commits made through the API too). `updates` carries each ref's old and new value (ZERO_ID for
 * a created or deleted ref).
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import { recordPush } from '../projects/projects.queries.ts';
import { inspectRepository } from './repositories.ts';
import { projectRepository, type RefUpdate } from './project-repository.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { createPushPipelines } from '../pipelines/push-pipelines.ts';
import { recordPushEvents } from '../events/push-events.ts';
import { protectDefaultBranch } from '../protected-refs/protected-refs.ts';
import { createMergeRequestPushPipelines } from '../pipelines/merge-request-pipelines.ts';
import { afterBranchPush } from '../merge-requests/merge-status.ts';
import { executePushHooks } from '../web-hooks/push-hooks.ts';
import { scheduleStatisticsRefresh } from '../statistics/project-statistics.ts';
import { executePushIntegrations } from '../integrations/push-integrations.ts';

/**
 * `userId` changed the refs and is the push pipelines' user. The pipelines are created after the
 * caller answers and are not waited for, as after a git push: a slow or failing pipeline never
 * slows or fails the write that already landed; `onPipelineError` hears why one failed.
 */
export async function afterRefUpdate(
  env: CiEnv, project: ProjectRow, updates: RefUpdate[], userId: number,
  onPipelineError: (err: unknown) => void,
): Promise<void> {
  if (updates.length === 0) return;
  const repo = projectRepository(env.storages, project);
  const state = await inspectRepository(repo.gitDir, project.default_branch);
  await recordPush(env.db, project.id, state);
  await scheduleStatisticsRefresh(env.db, project.id);
  // A default branch this write created is protected, as after a push (Project#after_create_default_branch).
  if (state.defaultBranch && updates.some((u) => u.ref === `refs/heads/${state.defaultBranch}` && /^0+$/.test(u.before))) {
    await protectDefaultBranch(env.db, { id: project.id, default_branch: state.defaultBranch });
  }
  setImmediate(() => {
    // The write's push events (the Service runs the same post-receive for API writes), then its pipelines.
    recordPushEvents(env.db, { gitDir: repo.gitDir, project, authorId: userId, updates })
      .catch(onPipelineError)
      // The push and tag push webhooks (Git::BranchHooksService runs them for API writes too).
      .then(() => executePushHooks(env.db, env, repo.gitDir, project, updates, userId))
      .catch(onPipelineError)
      // And the project's active integrations (execute_integrations runs beside the hooks).
      .then(() => executePushIntegrations(env.db, env, repo.gitDir, project, updates, userId))
      .catch(onPipelineError)
      // The merge requests of the moved branches: a diff version per source push, their merge status rechecked.
      .then(() => afterBranchPush(env.db, env.storages, repo.gitDir, project, updates, userId))
      .catch(onPipelineError)
      .then(() => createPushPipelines(env, project, updates, userId))
      .catch(onPipelineError)
      // Then the merge request pipelines of the open requests whose source branch moved.
      .then(() => createMergeRequestPushPipelines(env, project, updates, userId))
      .catch(onPipelineError);
  });
}
