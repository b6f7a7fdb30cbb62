/**
 * What a merge request is made of now, read alike by the API (GET …/commits, /changes, /diffs,
 * /pipelines) and the request's web pages: the range of its latest diff version while it is
 * closed or merged (its branches may be gone), else of its branches as they are (merge base of
 * the target and the source head), and the commits of that range, newest first.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { readCommits, refTarget, type CommitInfo } from '../repositories/git-read.ts';
import { diffVersionsOf } from './merge-requests.queries.ts';
import { commitIdsBetween, mergeBase } from './mr-git.ts';
import { sourceRefOf } from './fork-source.ts';

export interface RequestRange { base: string | null; head: string }

/** git's id of the empty tree: a range without a base is compared with it. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export async function requestRange(db: Kysely<DB>, gitDir: string, mr: MergeRequestRow): Promise<RequestRange | null> {
  const [latest] = await diffVersionsOf(db, mr.id);
  if (latest && mr.state !== 'opened' && mr.state !== 'locked') return { base: latest.base_commit_sha, head: latest.head_commit_sha };
  const head = await refTarget(gitDir, sourceRefOf(mr));
  const target = await refTarget(gitDir, `refs/heads/${mr.target_branch}`);
  if (!head || !target) return latest ? { base: latest.base_commit_sha, head: latest.head_commit_sha } : null;
  return { base: await mergeBase(gitDir, target, head), head };
}

/** The commits of `base..head`, newest first (at most MAX_COMMITS, as the API lists them). */
export async function rangeCommits(gitDir: string, base: string | null, head: string): Promise<CommitInfo[]> {
  const ids = base === head ? [] : await commitIdsBetween(gitDir, base, head);
  const commits = await readCommits(gitDir, ids);
  return ids.flatMap((id) => { const c = commits.get(id); return c ? [c] : []; });
}
