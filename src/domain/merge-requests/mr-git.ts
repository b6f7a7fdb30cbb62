/**
 * The git a merge request is made of, run with the system git on the project's bare repository
 * (never a working tree): the merge base of its branches, its commits, its diff file by file
 * (bounded like the Service's diff limits, Gitlab::Git::DiffCollection), whether the branches
 * merge cleanly (`git merge-tree --write-tree`, git ≥ 2.38), and the commits a merge writes
 * (a merge commit, a squash commit, a rebase onto the target) as objects only: moving refs is the
 * caller's, through updateRefs.
 */
import { runGit } from '../repositories/git-command.ts';
import { runGitBytes } from '../repositories/git-bytes.ts';
import { COMMIT_ID } from '../repositories/ref-names.ts';
import { identityPart } from '../repositories/commit-actions.ts';

/** Gitlab::Git::DiffCollection's hard limits (diff_max_files 1000, diff_max_lines 50000) and a file's (diff_max_patch_bytes 200 KiB). */
export const DIFF_LIMITS = { maxFiles: 1000, maxLines: 50_000, maxPatchBytes: 200 * 1024 } as const;
/** Most bytes of one `git diff` kiln reads (past it the rest of the files are overflow). */
const MAX_DIFF_OUTPUT = 64 * 1024 * 1024;
/** Commits of a merge request kiln lists or squashes (the Service's MergeRequestDiff::COMMITS_SAFE_SIZE is 1,000 too). */
export const MAX_COMMITS = 1000;

export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['merge-base', '--end-of-options', a, b], { gitDir, okExitCodes: [1] });
  const sha = stdout.trim();
  return exitCode === 0 && COMMIT_ID.test(sha) ? sha : null;
}

export async function isAncestor(gitDir: string, ancestor: string, of: string): Promise<boolean> {
  const { exitCode } = await runGit(['merge-base', '--is-ancestor', '--end-of-options', ancestor, of], { gitDir, okExitCodes: [1] });
  return exitCode === 0;
}

/** Commit ids in `base..head`, newest first, at most `max`. */
export async function commitIdsBetween(gitDir: string, base: string | null, head: string, max = MAX_COMMITS): Promise<string[]> {
  const range = base ? [`^${base}`, head] : [head];
  const { stdout } = await runGit(['rev-list', `--max-count=${max}`, '--end-of-options', ...range, '--'], { gitDir });
  return stdout.split('\n').filter(Boolean);
}

export interface FileDiff {
  old_path: string;
  new_path: string;
  a_mode: string;
  b_mode: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  /** The unified diff from its first hunk header (empty for a collapsed file). */
  diff: string;
  /** Past the per-file limit: shown without its patch (Gitlab::Git::Diff#too_large?). */
  too_large: boolean;
  additions: number;
  deletions: number;
}

export interface DiffResult {
  files: FileDiff[];
  /** Files past the collection's limits were left out (`overflow` of /changes). */
  overflow: boolean;
  /** How many files changed in all (`changes_count`: "1000+" past the limit). */
  realSize: string;
}

function parseRaw(raw: string): { status: string; aMode: string; bMode: string; oldPath: string; newPath: string }[] {
  const parts = raw.split('\0');
  const out = [];
  for (let i = 0; i < parts.length;) {
    const head = parts[i];
    if (!head || !head.startsWith(':')) { i += 1; continue; }
    const [aMode, bMode, , , status] = head.slice(1).split(' ');
    if (status.startsWith('R') || status.startsWith('C')) {
      out.push({ status: status[0], aMode, bMode, oldPath: parts[i + 1], newPath: parts[i + 2] });
      i += 3;
    } else {
      out.push({ status, aMode, bMode, oldPath: parts[i + 1], newPath: parts[i + 1] });
      i += 2;
    }
  }
  return out;
}

/** A file's patch without git's header lines: from the first hunk (or the "Binary files" line). */
function patchBody(chunk: string): string {
  const lines = chunk.split('\n');
  const start = lines.findIndex((l) => l.startsWith('@@') || l.startsWith('Binary files '));
  if (start < 0) return '';
  const body = lines.slice(start).join('\n');
  return body.endsWith('\n') ? body : `${body}\n`;
}

/**
 * The diff of `from`..`to` file by file, with renames found (`-M`), as the Service's diffs API
 * shows it; past DIFF_LIMITS the remaining files are left out and `overflow` set, and a file over
 * the per-file limit keeps its paths with an empty diff.
 */
export async function diffFiles(gitDir: string, from: string, to: string): Promise<DiffResult> {
  const rawOut = await runGitBytes(['diff', '--raw', '-z', '-M', '--no-abbrev', '--end-of-options', from, to, '--'], {
    gitDir, maxBytes: MAX_DIFF_OUTPUT,
  });
  const entries = parseRaw(rawOut.stdout.toString('utf8'));
  const shown = entries.slice(0, DIFF_LIMITS.maxFiles);
  const patchOut = await runGitBytes(
    ['diff', '-M', '--no-color', '--no-ext-diff', '--end-of-options', from, to, '--'],
    { gitDir, maxBytes: MAX_DIFF_OUTPUT, truncate: true },
  );
  const text = patchOut.stdout.toString('utf8');
  const chunks = text.split(/^(?=diff --git )/m).filter((c) => c.startsWith('diff --git '));
  let lines = 0;
  let overflow = entries.length > shown.length || Boolean(patchOut.truncated);
  const files: FileDiff[] = [];
  for (let i = 0; i < shown.length; i += 1) {
    const e = shown[i];
    const chunk = chunks[i] ?? '';
    const body = patchBody(chunk);
    const bodyLines = body === '' ? 0 : body.split('\n').length - 1;
    if (lines + bodyLines > DIFF_LIMITS.maxLines) { overflow = true; break; }
    let additions = 0;
    let deletions = 0;
    for (const l of body.split('\n')) {
      if (l.startsWith('+')) additions += 1;
      else if (l.startsWith('-')) deletions += 1;
    }
    const tooLarge = Buffer.byteLength(body) > DIFF_LIMITS.maxPatchBytes;
    lines += tooLarge ? 0 : bodyLines;
    files.push({
      old_path: e.oldPath, new_path: e.newPath, a_mode: e.aMode, b_mode: e.bMode,
      new_file: e.status === 'A', renamed_file: e.status === 'R', deleted_file: e.status === 'D',
      diff: tooLarge ? '' : body, too_large: tooLarge, additions, deletions,
    });
  }
  const realSize = entries.length > DIFF_LIMITS.maxFiles ? `${DIFF_LIMITS.maxFiles}+` : String(entries.length);
  return { files, overflow, realSize };
}

/** How many files `from`..`to` changes (changes_count). */
export async function changedFileCount(gitDir: string, from: string, to: string): Promise<number> {
  const { stdout } = await runGitBytes(['diff', '--name-only', '-z', '-M', '--end-of-options', from, to, '--'], {
    gitDir, maxBytes: MAX_DIFF_OUTPUT,
  });
  return stdout.toString('utf8').split('\0').filter(Boolean).length;
}

export type MergeTreeResult = { clean: true; tree: string } | { clean: false; conflicts: string[] };

/** Whether `ours` and `theirs` merge cleanly, and the merged tree when they do (`git merge-tree --write-tree`). */
export async function mergeTree(gitDir: string, ours: string, theirs: string): Promise<MergeTreeResult> {
  const { stdout, exitCode } = await runGitBytes(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', '--end-of-options', ours, theirs],
    // 128: git refuses to merge (unrelated histories): no clean merge exists, as for a conflict.
    { gitDir, maxBytes: MAX_DIFF_OUTPUT, okExitCodes: [1, 128] },
  );
  const parts = stdout.toString('utf8').split('\0').filter(Boolean);
  if (exitCode === 0) return { clean: true, tree: parts[0].trim() };
  if (exitCode !== 1) return { clean: false, conflicts: [] };
  return { clean: false, conflicts: [...new Set(parts.slice(1))] };
}

export interface Person { name: string; email: string }

/** Writes a commit object of `tree` with `parents`; answers its id. */
export async function commitTree(
  gitDir: string, o: { tree: string; parents: string[]; message: string; author: Person; committer: Person },
): Promise<string> {
  const env = {
    GIT_AUTHOR_NAME: identityPart(o.author.name), GIT_AUTHOR_EMAIL: identityPart(o.author.email),
    GIT_COMMITTER_NAME: identityPart(o.committer.name), GIT_COMMITTER_EMAIL: identityPart(o.committer.email),
  };
  const args = ['commit-tree', o.tree, ...o.parents.flatMap((p) => ['-p', p])];
  return (await runGit(args, { gitDir, env, input: o.message.endsWith('\n') ? o.message : `${o.message}\n` })).stdout.trim();
}

export async function treeOf(gitDir: string, commit: string): Promise<string> {
  return (await runGit(['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], { gitDir })).stdout.trim();
}

/**
 * The source's commits replayed onto `onto`, one by one with their authors (Gitaly's UserRebaseConfirmable
 * as the Service's rebase uses it); null when one of them does not apply cleanly.
 */
export async function rebaseCommits(gitDir: string, base: string, head: string, onto: string, committer: Person): Promise<string | null> {
  const ids = (await commitIdsBetween(gitDir, base, head, MAX_COMMITS + 1)).reverse();
  if (ids.length > MAX_COMMITS) return null;
  let tip = onto;
  for (const id of ids) {
    const { stdout } = await runGit(['show', '-s', '--format=%P%x00%an%x00%ae%x00%aI%x00%B', '--end-of-options', id], { gitDir });
    const [parents, an, ae, ad, ...msg] = stdout.split('\0');
    // Merge commits of the source are flattened, as `git rebase` drops them.
    if (parents.trim().split(' ').length > 1) continue;
    // The merge base git finds for the tip and the commit is the branch's fork point: the
    // commits before this one are on both sides and merge as themselves (git 2.39 has no --merge-base).
    const merged = await mergeTree(gitDir, tip, id);
    if (!merged.clean) return null;
    const tree = merged.tree;
    tip = await runGit(['commit-tree', tree, '-p', tip], {
      gitDir, input: msg.join('\0'),
      env: {
        GIT_AUTHOR_NAME: identityPart(an), GIT_AUTHOR_EMAIL: identityPart(ae), GIT_AUTHOR_DATE: ad,
        GIT_COMMITTER_NAME: identityPart(committer.name), GIT_COMMITTER_EMAIL: identityPart(committer.email),
      },
    }).then((r) => r.stdout.trim());
  }
  return tip;
}

/** How many commits the target has that the source (its full ref) lacks (diverged_commits_count), counting to MAX_COMMITS. */
export async function divergedCommitsCount(gitDir: string, sourceRef: string, targetBranch: string): Promise<number> {
  const { stdout, exitCode } = await runGit(
    ['rev-list', '--count', `--max-count=${MAX_COMMITS}`, '--end-of-options', `refs/heads/${targetBranch}`, `^${sourceRef}`, '--'],
    { gitDir, okExitCodes: [128] },
  );
  return exitCode === 0 ? Number(stdout.trim()) || 0 : 0;
}

/**
 * Whether a diff note's position names a line of the diff `base`..`head` of a file (DiffNote's
 * line code validation): a new line among the added or context lines of a hunk of `newPath`, or
 * an old line among the removed or context lines of `oldPath`.
 */
export async function diffHasLine(
  gitDir: string, base: string, head: string, p: { oldPath: string; newPath: string; oldLine: number | null; newLine: number | null },
): Promise<boolean> {
  if (p.oldLine === null && p.newLine === null) return false;
  const paths = [...new Set([p.oldPath, p.newPath])].map((x) => `:(literal)${x}`);
  let text: string;
  try {
    text = (await runGitBytes(['diff', '--no-color', '--no-ext-diff', '-M', '-U3', '--end-of-options', base, head, '--', ...paths], {
      gitDir, maxBytes: 16 * 1024 * 1024,
    })).stdout.toString('utf8');
  } catch {
    return false;
  }
  let oldPos = 0;
  let newPos = 0;
  let inHunk = false;
  for (const raw of text.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (hunk) {
      oldPos = Number(hunk[1]);
      newPos = Number(hunk[2]);
      inHunk = true;
      continue;
    }
    if (!inHunk || raw.startsWith('\\')) continue;
    if (raw.startsWith('diff --git ')) { inHunk = false; continue; }
    const kind = raw[0];
    if (kind === '+') {
      if (p.newLine === newPos && p.oldLine === null) return true;
      newPos += 1;
    } else if (kind === '-') {
      if (p.oldLine === oldPos && p.newLine === null) return true;
      oldPos += 1;
    } else if (kind === ' ') {
      if ((p.newLine === null || p.newLine === newPos) && (p.oldLine === null || p.oldLine === oldPos)) return true;
      oldPos += 1;
      newPos += 1;
    }
  }
  return false;
}
