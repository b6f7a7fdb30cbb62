/**
 * Cherry-picking a commit onto a branch, or reverting it there (the Service's
 * Commits::CherryPickService and Commits::RevertService through Gitaly's UserCherryPick and
 * UserRevert), as real commits made with plumbing, never a working tree.
 *
 * Both are a three-way merge of trees: a cherry-pick applies commit − parent to the branch
 * (base: the parent, theirs: the commit), a revert applies parent − commit (base: the commit,
 * theirs: the parent); a merge commit is taken against its first parent (mainline 1). git 2.39's
 * `merge-tree --write-tree` finds its merge base itself, so the base is given to it as the one
 * common parent of two stand-in commits holding the branch's tree and the other side's tree
 * (objects only, never named by a ref; git's gc drops them). A merge that conflicts is refused
 * with error code `conflict`; one that leaves the branch's tree as it was with `empty` (Gitaly's
 * ChangesAlreadyApplied), in the Service's words (Commits::ChangeService#commit_change).
 *
 * The cherry-picked commit keeps its author and the caller commits it; a revert is the caller's
 * own (gitaly-git2go's cherry-pick and revert). The branch moves through `updateRefs` with its
 * old value, so a push in between makes this write fail instead of losing the push.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { runGit } from './git-command.ts';
import { branchTips, type CommitInfo } from './git-read.ts';
import { identityPart, type Identity } from './commit-actions.ts';
import { updateRefs, type ProjectRepository, type RefUpdate } from './project-repository.ts';
import { COMMIT_ID, validRefName } from './ref-names.ts';

export type PickAction = 'cherry_pick' | 'revert';

export type PickResult =
  | { ok: true; commitId: string | null; update: RefUpdate | null }
  | { ok: false; reason: 'branch_not_found' }
  | { ok: false; reason: 'read_only' }
  | { ok: false; reason: 'failed'; message: string; errorCode?: 'conflict' | 'empty' };

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The identity of the stand-in commits: fixed, so the same trees give the same objects. */
const STAND_IN = {
  GIT_AUTHOR_NAME: 'kiln', GIT_AUTHOR_EMAIL: 'kiln@localhost', GIT_AUTHOR_DATE: '946684800 +0000',
  GIT_COMMITTER_NAME: 'kiln', GIT_COMMITTER_EMAIL: 'kiln@localhost', GIT_COMMITTER_DATE: '946684800 +0000',
};

async function treeOf(gitDir: string, commit: string): Promise<string> {
  return (await runGit(['rev-parse', '--verify', `${commit}^{tree}`], { gitDir })).stdout.trim();
}

async function standIn(gitDir: string, tree: string, parent?: string): Promise<string> {
  const args = ['commit-tree', tree, ...(parent ? ['-p', parent] : [])];
  return (await runGit(args, { gitDir, env: STAND_IN, input: 'stand-in\n' })).stdout.trim();
}

/** The tree of merging `theirs` into `ours` over `base`, or null when the merge conflicts. */
async function mergeTrees(gitDir: string, base: string, ours: string, theirs: string): Promise<string | null> {
  const b = await standIn(gitDir, base);
  const [o, t] = await Promise.all([standIn(gitDir, ours, b), standIn(gitDir, theirs, b)]);
  const { stdout, exitCode } = await runGit(['merge-tree', '--write-tree', '--no-messages', o, t], { gitDir, okExitCodes: [1] });
  if (exitCode !== 0) return null;
  const tree = stdout.split('\n', 1)[0].trim();
  if (!COMMIT_ID.test(tree)) throw new Error('git merge-tree answered no tree');
  return tree;
}

/** The Service's text for a change that cannot be made (Commits::ChangeService). */
function cannotMessage(action: PickAction): string {
  const verb = action === 'cherry_pick' ? 'cherry-pick' : 'revert';
  return `Sorry, we cannot ${verb} this commit automatically. This commit may already have been ${verb}ed, `
    + 'or a more recent commit may have updated some of its content.';
}

/** Commit#cherry_pick_message and Commit#revert_message (no merge request merged it: kiln's commits have none here). */
export function pickMessage(action: PickAction, commit: CommitInfo): string {
  if (action === 'cherry_pick') return `${commit.message}\n\n(cherry picked from commit ${commit.id})`;
  const title = commit.message.split('\n', 1)[0].trim();
  return `Revert "${title}"\n\nThis reverts commit ${commit.id}`;
}

export interface PickRequest {
  action: PickAction;
  commit: CommitInfo;
  branch: string;
  /** Checks that the change applies, writes nothing (`dry_run`). */
  dryRun: boolean;
  message?: string;
  committer: Identity;
}

export async function pickCommit(db: Kysely<DB>, repo: ProjectRepository, req: PickRequest): Promise<PickResult> {
  const { gitDir } = repo;
  const tip = validRefName(req.branch) ? (await branchTips(gitDir, [req.branch])).get(req.branch) : undefined;
  if (!tip) return { ok: false, reason: 'branch_not_found' };
  const parent = req.commit.parentIds[0];
  const [commitTree, parentTree, tipTree] = await Promise.all([
    treeOf(gitDir, req.commit.id), parent ? treeOf(gitDir, parent) : EMPTY_TREE, treeOf(gitDir, tip),
  ]);
  const [base, theirs] = req.action === 'cherry_pick' ? [parentTree, commitTree] : [commitTree, parentTree];
  const merged = await mergeTrees(gitDir, base, tipTree, theirs);
  if (merged === null) return { ok: false, reason: 'failed', message: cannotMessage(req.action), errorCode: 'conflict' };
  if (merged === tipTree) return { ok: false, reason: 'failed', message: cannotMessage(req.action), errorCode: 'empty' };
  if (req.dryRun) return { ok: true, commitId: null, update: null };
  const author = req.action === 'cherry_pick'
    ? { name: req.commit.authorName, email: req.commit.authorEmail, date: req.commit.authoredDate }
    : { ...req.committer, date: undefined };
  const env: Record<string, string> = {
    GIT_AUTHOR_NAME: identityPart(author.name), GIT_AUTHOR_EMAIL: identityPart(author.email),
    GIT_COMMITTER_NAME: identityPart(req.committer.name), GIT_COMMITTER_EMAIL: identityPart(req.committer.email),
    ...(author.date ? { GIT_AUTHOR_DATE: author.date } : {}),
  };
  const message = req.message ?? pickMessage(req.action, req.commit);
  const commitId = (await runGit(['commit-tree', merged, '-p', tip], { gitDir, env, input: message })).stdout.trim();
  const update = { ref: `refs/heads/${req.branch}`, before: tip, after: commitId };
  const r = await updateRefs(db, repo, [update]);
  if (r.ok) return { ok: true, commitId, update };
  if (r.reason === 'stale') {
    return { ok: false, reason: 'failed', message: `Could not update refs/heads/${req.branch}. Please refresh and try again.` };
  }
  return { ok: false, reason: 'read_only' };
}
