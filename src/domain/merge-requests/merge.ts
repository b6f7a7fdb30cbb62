/**
 * Merging a merge request (MergeRequests::MergeService and SquashService of the Service 15.2 as
 * PUT …/merge calls them), on real git: the merged tree from `git merge-tree --write-tree`, the
 * commits written as objects, then the target branch moved with updateRefs (its old value
 * checked, so a push racing the merge makes it fail instead of being lost) and afterRefUpdate
 * run as for any API write.
 *
 * The project's merge method decides the commit: `merge` a merge commit, `rebase_merge` a merge
 * commit only when the target could fast-forward, `ff` a fast-forward only. With `squash` the
 * source's commits become one commit on the merge base first (none for a single commit and no
 * message given, as SquashService skips it). The default messages are the Service's 15.2
 * templates: "Merge branch 'a' into 'b'", the title, the issues it closes and "See merge
 * request group/project!iid"; the squash commit takes the title.
 *
 * Once merged, the request records who and when, its `merged` state event and event; the issues
 * its description closes (`Closes #1`, the default closing pattern) are closed when the target is
 * the default branch (Project#autoclose_referenced_issues); the source branch is removed when
 * asked (`should_remove_source_branch`, or the request's `force_remove_source_branch`). A fork's
 * request merges from the head fetched into the target (fork-source.ts); its branch is removed in
 * the fork by accept.ts.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { refTarget } from '../repositories/git-read.ts';
import { updateRefs, type ProjectRepository, type RefUpdate } from '../repositories/project-repository.ts';
import { ZERO_ID } from '../repositories/ref-names.ts';
import { commitIdsBetween, commitTree, isAncestor, mergeBase, mergeTree, treeOf } from './mr-git.ts';
import { recordStateEvent, resolveTodosOf, updateMergeRequestIf } from './merge-requests.queries.ts';
import { findUsersByIds } from '../users/users-batch.queries.ts';
import { isForkRequest, sourceRefOf } from './fork-source.ts';

export interface MergeOptions {
  sha?: string;
  squash?: boolean;
  mergeCommitMessage?: string;
  squashCommitMessage?: string;
  shouldRemoveSourceBranch?: boolean;
}

export type MergeResult =
  | { ok: true; value: MergeRequestRow; updates: RefUpdate[]; removeForkSource?: string }
  | { ok: false; reason: 'not_allowed' | 'cannot_merge' | 'read_only' }
  | { ok: false; reason: 'sha_mismatch'; head: string };

/** The closing pattern of the Service's default (gitlab.yml issue_closing_pattern) with same-project `#iid` references. */
const CLOSING = /\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?):?\s+(?:issues?\s+)?((?:#\d+(?:\s*,?\s+and\s+|\s*,?\s*)?)+)/gi;

/** The iids of this project's issues a text closes (Gitlab::ClosingIssueExtractor). */
export function closingIssueIids(text: string | null): number[] {
  if (!text) return [];
  const out = new Set<number>();
  for (const m of text.matchAll(CLOSING)) {
    for (const ref of m[1].matchAll(/#(\d+)/g)) {
      const iid = Number(ref[1]);
      if (Number.isSafeInteger(iid) && iid > 0 && iid <= 2_147_483_647) out.add(iid);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** The iids of this project's issues a text mentions (`#1`, not followed by more digits). */
export function mentionedIssueIids(text: string | null): number[] {
  if (!text) return [];
  const out = new Set<number>();
  for (const m of text.matchAll(/(?<![\w&])#(\d+)\b/g)) {
    const iid = Number(m[1]);
    if (Number.isSafeInteger(iid) && iid > 0) out.add(iid);
  }
  return [...out];
}

export function defaultMergeCommitMessage(mr: MergeRequestRow, projectPath: string): string {
  const closes = closingIssueIids(mr.description);
  return [
    `Merge branch '${mr.source_branch}' into '${mr.target_branch}'`, '', mr.title, '',
    ...(closes.length > 0 ? [`Closes ${closes.map((i) => `#${i}`).join(', ')}`, ''] : []),
    `See merge request ${projectPath}!${mr.iid}`,
  ].join('\n');
}

/** Whether the request may be merged now (MergeRequest#mergeable? minus the CI and discussion checks the caller makes). */
export function mergeableState(mr: MergeRequestRow): boolean {
  return mr.state === 'opened' && mr.draft === 0;
}

export async function mergeMergeRequest(
  db: Kysely<DB>, repo: ProjectRepository, project: ProjectRow & { pathWithNamespace: string }, mr: MergeRequestRow, user: UserRow,
  o: MergeOptions,
): Promise<MergeResult> {
  const gitDir = repo.gitDir;
  const [source, target] = await Promise.all([
    refTarget(gitDir, sourceRefOf(mr)), refTarget(gitDir, `refs/heads/${mr.target_branch}`),
  ]);
  if (!mergeableState(mr) || !source || !target) return { ok: false, reason: 'not_allowed' };
  const merged = await mergeTree(gitDir, target, source);
  if (!merged.clean) return { ok: false, reason: 'not_allowed' };
  const ffPossible = await isAncestor(gitDir, target, source);
  const method = project.merge_method;
  if ((method === 'ff' || method === 'rebase_merge') && !ffPossible) return { ok: false, reason: 'not_allowed' };
  if (o.sha !== undefined && o.sha !== source) return { ok: false, reason: 'sha_mismatch', head: source };

  const committer = { name: user.name, email: user.commit_email || user.email };
  const squash = o.squash ?? mr.squash === 1;
  let head = source;
  let squashSha: string | null = null;
  if (squash) {
    const base = await mergeBase(gitDir, target, source);
    const commits = await commitIdsBetween(gitDir, base, source, 2);
    if (commits.length > 1 || o.squashCommitMessage !== undefined) {
      const [authorRow] = await findUsersByIds(db, [mr.author_id]);
      const author = authorRow ? { name: authorRow.name, email: authorRow.commit_email || authorRow.email } : committer;
      squashSha = await commitTree(gitDir, {
        tree: await treeOf(gitDir, source), parents: base ? [base] : [], author, committer,
        message: o.squashCommitMessage ?? mr.title,
      });
      head = squashSha;
    } else squashSha = source;
  }
  let newTarget: string;
  let mergeCommit: string | null = null;
  if (method === 'ff') newTarget = head;
  else {
    const tree = head === source ? merged.tree : await mergeTree(gitDir, target, head).then((r) => (r.clean ? r.tree : null));
    if (!tree) return { ok: false, reason: 'cannot_merge' };
    mergeCommit = await commitTree(gitDir, {
      tree, parents: [target, head], author: committer, committer,
      message: o.mergeCommitMessage ?? defaultMergeCommitMessage(mr, project.pathWithNamespace),
    });
    newTarget = mergeCommit;
  }
  const update: RefUpdate = { ref: `refs/heads/${mr.target_branch}`, before: target, after: newTarget };
  const moved = await updateRefs(db, repo, [update]);
  if (!moved.ok) return { ok: false, reason: moved.reason === 'read_only' ? 'read_only' : 'cannot_merge' };

  const now = nowIso();
  const removeSource = o.shouldRemoveSourceBranch ?? (mr.force_remove_source_branch === 1);
  const row = await db.transaction().execute(async (trx) => {
    const done = await updateMergeRequestIf(trx, mr.id, { state: 'opened' }, {
      state: 'merged', merged_at: now, merged_by_id: user.id, merge_user_id: user.id, merge_commit_sha: mergeCommit,
      squash_commit_sha: squash ? squashSha : null, squash: squash ? 1 : 0, merge_when_pipeline_succeeds: 0, merge_error: null,
      should_remove_source_branch: o.shouldRemoveSourceBranch === undefined ? null : o.shouldRemoveSourceBranch ? 1 : 0,
      merge_status: 'can_be_merged', updated_at: now, merge_params: null,
    });
    if (!done) return undefined;
    await recordStateEvent(trx, mr.id, user.id, 'merged', now, mergeCommit ?? newTarget);
    await recordEvent(trx, {
      project_id: mr.project_id, author_id: user.id, action: 'merged', target_type: 'MergeRequest', target_id: mr.id,
    });
    await resolveTodosOf(trx, mr.id, now);
    await queueObjectHook(trx, { kind: 'merge_request', id: mr.id, projectId: mr.project_id, action: 'merge', userId: user.id });
    return done;
  });
  const updates = [update];
  if (!row) return { ok: false, reason: 'cannot_merge' };
  // A fork's branch is the fork's to remove, by the caller (accept.ts) and only for a user who may push there.
  if (removeSource && isForkRequest(mr)) return { ok: true, value: row, updates, removeForkSource: source };
  if (removeSource && mr.source_branch !== project.default_branch) {
    const del: RefUpdate = { ref: `refs/heads/${mr.source_branch}`, before: source, after: ZERO_ID };
    if ((await updateRefs(db, repo, [del])).ok) updates.push(del);
  }
  return { ok: true, value: row, updates };
}
