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
import { issuesByIids, markIssueClosedBy } from './merge-requests.queries.ts';
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
