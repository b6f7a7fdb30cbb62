/**
 * Accepting a merge request, whether a caller merges it now (PUT …/merge) or its pipeline
 * finishing merges it (merge when pipeline succeeds): the merge itself (merge.ts), then what
 * follows every API ref write (afterRefUpdate: push events, pipelines, the other requests of the
 * moved branches), then the issues its description closes when it merged into the default branch
 * (Project#autoclose_referenced_issues; MergeRequests::PostMergeService#close_issues), each closed
 * by the merging user with a state event naming the request. A fork's source branch asked to go
 * goes from the fork, when the merging user may push there (fork-source.ts).
 */
import type { UserRow } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { projectRepository } from '../repositories/project-repository.ts';
import { afterRefUpdate } from '../repositories/after-ref-update.ts';
import { updateIssue } from '../issues/update-issue.ts';
import { closingIssueIids, mergeMergeRequest, type MergeOptions, type MergeResult } from './merge.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { headPipelineOf, issuesByIids, markIssueClosedBy, mergeRequestCounts } from './merge-requests.queries.ts';
import { removeForkSourceBranch } from './fork-source.ts';

export async function acceptMergeRequest(
  env: CiEnv, project: ProjectRow, mr: MergeRequestRow, user: UserRow, o: MergeOptions, onError: (err: unknown) => void,
): Promise<MergeResult> {
  const { db } = env;
  const paths = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)!;
  const pathWithNamespace = `${paths.fullPath}/${project.path}`;
  const repo = projectRepository(env.storages, project);
  const result = await mergeMergeRequest(db, repo, { ...project, pathWithNamespace }, mr, user, o);
  if (!result.ok) return result;
  await afterRefUpdate(env, project, result.updates, user.id, onError);
  if (result.removeForkSource) {
    const removed = await removeForkSourceBranch(env, user, mr, result.removeForkSource);
    if (removed) await afterRefUpdate(env, removed.project, [removed.update], user.id, onError);
  }
  if (project.autoclose_referenced_issues === 1 && mr.target_branch === project.default_branch) {
    const lineage = paths.lineage;
    const actor = await projectActor(db, user, project.id, lineage);
    for (const issue of await issuesByIids(db, project.id, closingIssueIids(mr.description))) {
      if (issue.state !== 'opened') continue;
      await updateIssue(db, { where: { project, lineage }, issue, user, actor, params: { stateEvent: 'close' } });
      await markIssueClosedBy(db, issue.id, mr.id);
    }
  }
  return result;
}

/**
 * The head pipeline statuses that merge when pipeline succeeds waits for (Ci::HasStatus::ACTIVE_STATUSES
 * and a manual one): with any other, PUT …/merge with merge_when_pipeline_succeeds merges now.
 */
export const AUTO_MERGE_WAITS_FOR: readonly string[] = [
  'created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled', 'manual',
];

/** The pipeline of the request's source head (the newest of its branch or its own at `head`), if any. */
export function requestHeadPipeline(db: Kysely<DB>, mr: MergeRequestRow, head: string | null) {
  return head && mr.source_project_id !== null
    ? headPipelineOf(db, mr.source_project_id, mr.source_branch, mr.id, head) : Promise.resolve(undefined);
}

/**
 * Whether the checks besides git pass (MergeRequest#mergeable_state?: every thread resolved and
 * a successful head pipeline, where the project asks for them): the API's PUT …/merge and the
 * request page's merge button decide alike.
 */
export async function ciAndDiscussionsAllow(
  db: Kysely<DB>, mr: MergeRequestRow,
  project: Pick<ProjectRow, 'id' | 'only_allow_merge_if_pipeline_succeeds' | 'allow_merge_on_skipped_pipeline'
    | 'only_allow_merge_if_all_discussions_are_resolved'>,
  head: string | null,
): Promise<boolean> {
  if (project.only_allow_merge_if_all_discussions_are_resolved === 1) {
    if ((await mergeRequestCounts(db, [mr.id])).get(mr.id)!.unresolved_discussions > 0) return false;
  }
  if (project.only_allow_merge_if_pipeline_succeeds === 1) {
    const pipeline = await requestHeadPipeline(db, mr, head);
    if (!pipeline) return false;
    return pipeline.status === 'success' || (pipeline.status === 'skipped' && project.allow_merge_on_skipped_pipeline === 1);
  }
  return true;
}
