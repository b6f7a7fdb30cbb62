/**
 * Merge request pipelines (the Service 15.2's MergeRequests::CreatePipelineService, detached
 * kind): source `merge_request_event`, run on the request's source head through its ref
 * refs/merge-requests/:iid/head (written here with the project's ref machinery, so a runner can
 * fetch it), linked to the request by `merge_request_id`. A fork's request runs its pipelines in
 * the fork (the source project), on the source branch, as the Service does by default.
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
import { isForkRequest } from '../merge-requests/fork-source.ts';

export type MergeRequestPipelineResult = CreatePipelineResult | { ok: false; error: string; reason: 'no_source' };

/**
 * A detached merge request pipeline at the request's source head: refs/merge-requests/:iid/head
 * moved there first, then the pipeline created on it. `persistConfigErrors` keeps a failed
 * pipeline for an invalid configuration (the API's request), as a push does.
 */
export async function createMergeRequestPipeline(
  env: CiEnv, mr: MergeRequestRow, userId: number, o: { persistConfigErrors?: boolean; skip?: boolean } = {},
): Promise<MergeRequestPipelineResult> {
  const project = mr.source_project_id === null ? undefined : await findProjectById(env.db, mr.source_project_id);
  if (!project) return { ok: false, error: 'Source project not found', reason: 'no_source' };
  const repo = projectRepository(env.storages, project);
  const head = await refTarget(repo.gitDir, `refs/heads/${mr.source_branch}`);
  if (!head) return { ok: false, error: 'Reference not found' };
  if (await readFileAt(repo.gitDir, head, CI_CONFIG_PATH) === null) return { ok: false, error: 'Missing CI config file' };
  // A fork's request runs in the fork on its branch (CreatePipelineService#pipeline_ref_for_detached_merge_request_pipeline:
  // the source branch unless the pipeline runs in the target): refs/merge-requests/ of the fork name its own requests.
  const fork = isForkRequest(mr);
  const ref = fork ? mr.source_branch : mergeRequestRefPath(mr.iid);
  const before = fork ? head : (await refTarget(repo.gitDir, ref)) ?? ZERO_ID;
  if (before !== head) {
    const moved = await updateRefs(env.db, repo, [{ ref, before, after: head }]);
    // The merge status check publishes the same ref: losing that race to the same head is fine.
    if (!moved.ok && await refTarget(repo.gitDir, ref) !== head) return { ok: false, error: 'Reference not found' };
  }
  // Chain::Skip comes before the configuration is read: `[ci skip]` or the ci.skip push option
  // keeps a skipped pipeline, as for the push itself.
  const commit = await readCommit(repo.gitDir, head);
  if (o.skip || SKIP_PATTERN.test(commit.message)) {
    const pipeline = await skippedPipeline(env, project, { name: ref, tag: false, before: BLANK_SHA, after: head }, userId,
      JSON.stringify(commit), { source: MERGE_REQUEST_EVENT, mergeRequestId: mr.id });
    return { ok: true, pipeline };
  }
  const variables = await resolvePipelineVariables(env.db, env.dataDir, project, mr.source_branch, []);
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
