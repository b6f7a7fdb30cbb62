/**
 * Merge request pipelines (the Service 15.2's MergeRequests::CreatePipelineService, detached
 * kind): source `merge_request_event`, run on the request's source head through its ref
 * refs/merge-requests/:iid/head (written here with the project's ref machinery, so a runner can
 * fetch it), linked to the request by `merge_request_id`. A fork's request runs its pipelines in
 * the target when the user asking may run pipelines there (then on the target's head ref of the
 * fork's branch), otherwise in the fork on the source branch, as the Service 15.2 decides.
 *
 * They are created when a request is opened, after each push to its source branch, and by
 * POST …/merge_requests/:iid/pipelines. As in the Service, a pipeline is kept only when some job
 * asks for it (`only: [merge_requests]`, `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`):
 * a configuration that selects no job for this source creates nothing ("No stages / jobs for
 * this pipeline.").
 * Their jobs' CI_MERGE_REQUEST_* variables: merge-request-variables.ts.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import type { CiEnv } from './ci-env.ts';
import { createPipeline } from './create-pipeline.ts';
import { CI_CONFIG_PATH, type CreatePipelineResult } from './create-pipeline-rows.ts';
import { readCommit, readFileAt, BLANK_SHA } from './git-source.ts';
import { SKIP_PATTERN, skippedPipeline } from './push-pipelines.ts';
import { resolvePipelineVariables } from '../ci-variables/collect-variables.ts';
import { openMergeRequestsOfBranches } from '../merge-requests/merge-requests.queries.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { MERGE_REQUEST_EVENT, mergeRequestRefPath } from './merge-request-variables.ts';
import { refTarget } from '../repositories/git-read.ts';
import { projectRepository, updateRefs } from '../repositories/project-repository.ts';
import { ZERO_ID } from '../repositories/ref-names.ts';
import {
  canCreatePipelineInTarget, isForkRequest, mayCreatePipelineIn, requestHeadRef, syncForkSourceHead,
} from '../merge-requests/fork-source.ts';
import { featureEnabled } from '../features/features.ts';
import { findUserById } from '../users/users.queries.ts';

export type MergeRequestPipelineResult = CreatePipelineResult | { ok: false; error: string; reason: 'no_source' };

/** The kill switch of running a fork's request pipelines in the target (Gitlab::Ci::Features, off by default). */
export const TARGET_PIPELINES_DISALLOWED = 'ci_disallow_to_create_merge_request_pipelines_in_target_project';

/**
 * Where a request's pipeline runs for `userId` (MergeRequests::CreatePipelineService#pipeline_project
 * of the Service 15.2): a fork's request in its TARGET when the flag allows it and the user may
 * create pipelines there and update the source branch's ref there (can_create_pipeline_in_target_project?),
 * on the head ref the target keeps of the fork's branch; otherwise in the source project.
 */
async function pipelineTarget(env: CiEnv, mr: MergeRequestRow, userId: number): Promise<ProjectRow | null> {
  if (!isForkRequest(mr)) return null;
  const target = await findProjectById(env.db, mr.project_id);
  if (!target || target.pending_delete === 1) return null;
  if (await featureEnabled(env.db, TARGET_PIPELINES_DISALLOWED, { kind: 'Project', id: target.id })) return null;
  const user = await findUserById(env.db, userId);
  return user && await canCreatePipelineInTarget(env.db, user, target, mr.source_branch) ? target : null;
}

/**
 * A detached merge request pipeline at the request's source head. In the source project:
 * refs/merge-requests/:iid/head moved there first (the source branch itself for a fork's request
 * left in the fork), then the pipeline created on it. In a fork's target: on the target's
 * refs/merge-requests/:iid/head (MergeRequest#ref_path), brought to the fork's head first, with
 * the target's variables; the jobs then run on the target's runners. `persistConfigErrors` keeps a
 * failed pipeline for an invalid configuration (the API's request), as a push does.
 * `checkAbility` refuses a user without create_pipeline in the project the pipeline runs in (the
 * API's request: Ci::CreatePipelineService's ability check, "Insufficient permissions…").
 */
export async function createMergeRequestPipeline(
  env: CiEnv, mr: MergeRequestRow, userId: number, o: { persistConfigErrors?: boolean; skip?: boolean; checkAbility?: boolean } = {},
): Promise<MergeRequestPipelineResult> {
  const target = await pipelineTarget(env, mr, userId);
  const project = target ?? (mr.source_project_id === null ? undefined : await findProjectById(env.db, mr.source_project_id));
  if (!project) return { ok: false, error: 'Source project not found', reason: 'no_source' };
  if (o.checkAbility && !target) {
    const user = await findUserById(env.db, userId);
    if (!user || !await mayCreatePipelineIn(env.db, user, project)) {
      return { ok: false, error: 'Insufficient permissions to create a new pipeline' };
    }
  }
  const repo = projectRepository(env.storages, project);
  let ref: string;
  let head: string | null;
  if (target) {
    ref = requestHeadRef(mr.iid);
    // The fork's newest head when the fork still has the branch, else what the target kept of it.
    head = (await syncForkSourceHead(env.db, env.storages, mr, target)) ?? await refTarget(repo.gitDir, ref);
    if (!head) return { ok: false, error: 'Reference not found' };
    if (await readFileAt(repo.gitDir, head, CI_CONFIG_PATH) === null) return { ok: false, error: 'Missing CI config file' };
  } else {
    head = await refTarget(repo.gitDir, `refs/heads/${mr.source_branch}`);
    if (!head) return { ok: false, error: 'Reference not found' };
    if (await readFileAt(repo.gitDir, head, CI_CONFIG_PATH) === null) return { ok: false, error: 'Missing CI config file' };
    // A fork's request left in the fork runs on its branch (CreatePipelineService#pipeline_ref_for_detached_merge_request_pipeline:
    // the source branch unless the pipeline runs in the target): refs/merge-requests/ of the fork name its own requests.
    const fork = isForkRequest(mr);
    ref = fork ? mr.source_branch : mergeRequestRefPath(mr.iid);
    const before = fork ? head : (await refTarget(repo.gitDir, ref)) ?? ZERO_ID;
    if (before !== head) {
      const moved = await updateRefs(env.db, repo, [{ ref, before, after: head }]);
      // The merge status check publishes the same ref: losing that race to the same head is fine.
      if (!moved.ok && await refTarget(repo.gitDir, ref) !== head) return { ok: false, error: 'Reference not found' };
    }
  }
  // Chain::Skip comes before the configuration is read: `[ci skip]` or the ci.skip push option
  // keeps a skipped pipeline, as for the push itself.
  const commit = await readCommit(repo.gitDir, head);
  if (o.skip || SKIP_PATTERN.test(commit.message)) {
    const pipeline = await skippedPipeline(env, project, { name: ref, tag: false, before: BLANK_SHA, after: head }, userId,
      JSON.stringify(commit), { source: MERGE_REQUEST_EVENT, mergeRequestId: mr.id });
    return { ok: true, pipeline };
  }
  // In the target the variables are the target's, for its merge request ref, as its jobs are given them.
  const variables = await resolvePipelineVariables(env.db, env.dataDir, project, target ? ref : mr.source_branch, []);
  return createPipeline(env, {
    project, ref, userId, source: MERGE_REQUEST_EVENT, at: { sha: head, tag: false }, beforeSha: BLANK_SHA,
    persistConfigErrors: o.persistConfigErrors ?? false, variables, mergeRequestId: mr.id,
  });
}

/**
 * After a push (MergeRequests::RefreshService#refresh_pipelines_on_merge_requests): a merge request
 * pipeline for each open request whose source branch the push moved. Run after the requests were
 * refreshed, so each has the diff version of its new head.
 */
export async function createMergeRequestPushPipelines(
  env: CiEnv, project: ProjectRow, updates: ReadonlyArray<{ ref: string; after: string }>, userId: number,
  o: { skip?: boolean } = {},
): Promise<CreatePipelineResult[]> {
  const moved = updates.filter((u) => u.ref.startsWith('refs/heads/') && u.after !== ZERO_ID && u.after !== BLANK_SHA);
  if (moved.length === 0) return [];
  const branches = moved.map((u) => u.ref.slice('refs/heads/'.length));
  const requests = (await openMergeRequestsOfBranches(env.db, project.id, branches))
    .filter((mr) => mr.state === 'opened' && mr.source_project_id === project.id && branches.includes(mr.source_branch));
  const out: CreatePipelineResult[] = [];
  for (const mr of requests) out.push(await createMergeRequestPipeline(env, mr, userId, { skip: o.skip }));
  return out;
}
