/**
 * A merge request's merge status (MergeRequests::MergeabilityCheckService of the Service 15.2),
 * computed by a background job after each push to its source or target branch, its creation, a
 * retarget or a reopen — never by a request waiting on git. The check merges the two heads in
 * memory (`git merge-tree --write-tree`): clean is `can_be_merged` and publishes the merge as
 * refs/merge-requests/:iid/merge (the Service's merge ref, read by GET …/merge_ref), a conflict
 * is `cannot_be_merged`. A result computed for heads that moved meanwhile is dropped: the push
 * that moved them queued its own check.
 *
 * After a push (afterBranchPush), each open request of a pushed source branch gets a diff version
 * for its new head (MergeRequests::RefreshService#reload_diffs), and every request of a pushed
 * source or target goes back to `unchecked` with a check queued. A push to a target branch that
 * now holds a request's whole source branch merged it outside kiln: the request is marked merged
 * by the pusher (RefreshService#post_merge_manually_merged).
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { StorageShard } from '../../config/schema.ts';
import { nowIso } from '../clock.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { refTarget } from '../repositories/git-read.ts';
import { projectRepository, updateRefs, type RefUpdate } from '../repositories/project-repository.ts';
import { ZERO_ID } from '../repositories/ref-names.ts';
import { commitTree, isAncestor, mergeTree } from './mr-git.ts';
import {
  findMergeRequestById, insertDiffVersion, latestDiffsOf, openMergeRequestsOfBranches, recordStateEvent, resolveTodosOf,
  updateMergeRequestIf, updateMergeRequestRow,
} from './merge-requests.queries.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { recordEvent } from '../events/events.queries.ts';
import { diffVersion, queueMergeStatusCheck } from './write-merge-request.ts';
import { isForkRequest, sourceRefOf, syncForkSourceHead } from './fork-source.ts';

const BRANCH = 'refs/heads/';

export interface MergeStatusDeps {
  db: Kysely<DB>;
  shards: StorageShard[];
}

/** The heads a status was computed for, and whether the target could fast-forward to the source. */
export function statusHeads(source: string, target: string, ffPossible: boolean): string {
  return `${source} ${target} ${ffPossible ? 'ff' : 'noff'}`;
}

export function ffPossibleOf(heads: string | null): boolean | null {
  if (!heads) return null;
  return heads.endsWith(' ff');
}

export async function checkMergeStatus(deps: MergeStatusDeps, mergeRequestId: number): Promise<void> {
  const { db } = deps;
  const mr = await findMergeRequestById(db, mergeRequestId);
  if (!mr || (mr.state !== 'opened' && mr.state !== 'locked')) return;
  const project = await findProjectById(db, mr.project_id);
  if (!project) return;
  const repo = projectRepository(deps.shards, project);
  // A fork's request: its head fetched into the target first (fork-source.ts); a source gone
  // (the fork or its branch removed) cannot be merged, as a missing branch of the project.
  const fork = isForkRequest(mr);
  const forkHead = fork ? await syncForkSourceHead(db, deps.shards, mr, project) : null;
  const heads = async () => Promise.all([
    fork && forkHead === null ? null : refTarget(repo.gitDir, sourceRefOf(mr)),
    refTarget(repo.gitDir, `${BRANCH}${mr.target_branch}`),
  ]);
  const [source, target] = await heads();
  if (!source || !target) {
    await updateMergeRequestRow(db, mr.id, { merge_status: 'cannot_be_merged', merge_status_heads: null });
    return;
  }
  const merged = await mergeTree(repo.gitDir, target, source);
  const ff = await isAncestor(repo.gitDir, target, source);
  let mergeRef: string | null = null;
  if (merged.clean) {
    const who = { name: 'kiln', email: 'noreply@kiln.invalid' };
    mergeRef = await commitTree(repo.gitDir, {
      tree: merged.tree, parents: [target, source], author: who, committer: who,
      message: `Merge branch '${mr.source_branch}' into '${mr.target_branch}'\n\n${mr.title}`,
    });
  }
  // The heads moved while git worked: the push that moved them queued a check of its own.
  const [source2, target2] = await heads();
  if (source2 !== source || target2 !== target) return;
  if (mergeRef) await publishRefs(db, repo, mr.iid, source, mergeRef);
  await updateMergeRequestRow(db, mr.id, {
    merge_status: merged.clean ? 'can_be_merged' : 'cannot_be_merged',
    merge_status_heads: statusHeads(source, target, ff), merge_ref_sha: mergeRef,
  });
}

/** refs/merge-requests/:iid/head (the source head) and …/merge (the trial merge), as the Service keeps them. */
async function publishRefs(db: Kysely<DB>, repo: ReturnType<typeof projectRepository>, iid: number, head: string, merge: string) {
  const updates: RefUpdate[] = [];
  for (const [name, sha] of [['head', head], ['merge', merge]] as const) {
    const ref = `refs/merge-requests/${iid}/${name}`;
    const before = (await refTarget(repo.gitDir, ref)) ?? ZERO_ID;
    if (before !== sha) updates.push({ ref, before, after: sha });
  }
  if (updates.length > 0) await updateRefs(db, repo, updates);
}

/**
 * What a push or an API ref write does to the merge requests of the branches it moved: those of
 * this project's target branches, and those whose source branch is here — in this project or,
 * for a fork, in the project it targets (whose head ref is fetched anew first, fork-source.ts).
 */
export async function afterBranchPush(
  db: Kysely<DB>, shards: StorageShard[], gitDir: string, project: ProjectRow, updates: readonly RefUpdate[], userId: number,
): Promise<void> {
  const moved = updates.filter((u) => u.ref.startsWith(BRANCH));
  if (moved.length === 0) return;
  const branches = moved.map((u) => u.ref.slice(BRANCH.length));
  const requests = await openMergeRequestsOfBranches(db, project.id, branches);
  if (requests.length === 0) return;
  const now = nowIso();
  const checks: number[] = [];
  const targets = new Map<number, ProjectRow | undefined>([[project.id, project]]);
  for (const mr of requests) {
    if (!targets.has(mr.project_id)) targets.set(mr.project_id, await findProjectById(db, mr.project_id));
    const target = targets.get(mr.project_id);
    if (!target) continue;
    const targetDir = target.id === project.id ? gitDir : projectRepository(shards, target).gitDir;
    const targetUpdate = moved.find((u) => u.ref === `${BRANCH}${mr.target_branch}` && mr.project_id === project.id);
    if (targetUpdate && targetUpdate.after !== ZERO_ID && mr.state === 'opened') {
      const source = await refTarget(gitDir, sourceRefOf(mr));
      const [latest] = await latestDiffsOf(db, [mr.id]);
      const whole = source && latest?.state === 'collected' && latest.head_commit_sha === source;
      if (whole && await isAncestor(gitDir, source, targetUpdate.after)) {
        await markMergedByPush(db, mr, userId, targetUpdate.after, now);
        continue;
      }
    }
    checks.push(mr.id);
    const sourceUpdate = moved.find((u) => u.ref === `${BRANCH}${mr.source_branch}` && mr.source_project_id === project.id);
    if (sourceUpdate && sourceUpdate.after !== ZERO_ID) {
      // A fork's new head reaches the target repository before its version is computed there.
      const head = isForkRequest(mr) ? await syncForkSourceHead(db, shards, mr, target) : sourceUpdate.after;
      const targetHead = await refTarget(targetDir, `${BRANCH}${mr.target_branch}`);
      if (head && targetHead) await insertDiffVersion(db, { mrId: mr.id, ...(await diffVersion(targetDir, head, targetHead)), now });
    }
    await updateMergeRequestRow(db, mr.id, {
      merge_status: 'unchecked', merge_status_heads: null, updated_at: sourceUpdate ? now : mr.updated_at,
    });
  }
  await queueMergeStatusCheck(db, checks);
}

/** A request whose source the target now holds: merged by the push that moved the target. */
async function markMergedByPush(db: Kysely<DB>, mr: MergeRequestRow, userId: number, commit: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const done = await updateMergeRequestIf(trx, mr.id, { state: 'opened' }, {
      state: 'merged', merged_at: now, merged_by_id: userId, merge_user_id: userId, merge_commit_sha: commit,
      merge_when_pipeline_succeeds: 0, updated_at: now,
    });
    if (!done) return;
    await recordStateEvent(trx, mr.id, userId, 'merged', now, commit);
    await recordEvent(trx, {
      project_id: mr.project_id, author_id: userId, action: 'merged', target_type: 'MergeRequest', target_id: mr.id,
    }, now);
    await resolveTodosOf(trx, mr.id, now);
    await queueObjectHook(trx, { kind: 'merge_request', id: mr.id, projectId: mr.project_id, action: 'merge', userId });
  });
}
