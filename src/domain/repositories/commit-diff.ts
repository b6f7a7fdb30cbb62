/**
 * A commit's changes file by file, as the Service's GET …/commits/:sha/diff gives them
 * (Commit#diffs(expanded: true), one Gitlab::Git::Diff each, with Gitaly's CommitDiff limits):
 * against the first parent (the empty tree for a root commit), renames found at 30 % similarity
 * as Gitaly asks git to, each file's patch from its first hunk (`@@`) without git's header lines.
 *
 * Limits (Gitlab::Git::DiffCollection.limits with the application settings): the walk stops
 * before the file that would pass `diff_max_files` files, `diff_max_lines` lines or
 * `diff_max_files` × 5 KiB bytes in all (the collection overflows); a single file's patch larger
 * than `diff_max_patch_bytes` is answered empty (Gitlab::Git::Diff#too_large?).
 *
 * Two git processes: `diff --raw -z` for exact paths, modes and change kinds, and one patch of
 * the whole commit cut at its `diff --git` lines (the same files in the same order).
 */
import { runGit } from './git-command.ts';
import { runGitBytes } from './git-bytes.ts';
import type { CommitInfo } from './git-read.ts';

export interface FileDiff {
  diff: string;
  newPath: string;
  oldPath: string;
  aMode: string;
  bMode: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
}

export interface DiffLimits {
  maxFiles: number;
  maxLines: number;
  maxPatchBytes: number;
}

/** git's id of the empty tree: a root commit is compared with it. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

interface RawEntry {
  aMode: string;
  bMode: string;
  status: string;
  oldPath: string;
  newPath: string;
}

function parseRaw(stdout: string): RawEntry[] {
  const parts = stdout.split('\0');
  const out: RawEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const m = /^:(\d{6}) (\d{6}) [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/.exec(parts[i]);
    if (!m) continue;
    const twoPaths = m[3] === 'R' || m[3] === 'C';
    const oldPath = parts[++i];
    const newPath = twoPaths ? parts[++i] : oldPath;
    out.push({ aMode: m[1], bMode: m[2], status: m[3], oldPath, newPath });
  }
  return out;
}

/** The patch of one file without git's header lines ("diff --git", "index", "---", "+++", modes). */
function patchBody(section: string): string {
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith('@@') || l.startsWith('Binary files '));
  return start === -1 ? '' : lines.slice(start).join('\n');
}

const octal = (mode: string) => (Number.parseInt(mode, 8) === 0 ? '0' : mode.replace(/^0+/, ''));

export async function commitDiffs(gitDir: string, commit: CommitInfo, limits: DiffLimits): Promise<FileDiff[]> {
  const from = commit.parentIds[0] ?? EMPTY_TREE;
  const common = ['--no-color', '--no-ext-diff', '--find-renames=30%', '--full-index', '--no-textconv'];
  const maxBytes = limits.maxFiles * 5 * 1024;
  const [raw, patch] = await Promise.all([
    runGit(['diff', '--raw', '-z', ...common, from, commit.id, '--'], { gitDir }),
    // Past what the limits can answer, the rest is not read (the walk stops before it anyway).
    runGitBytes(['diff', '-p', ...common, from, commit.id, '--'], {
      gitDir, maxBytes: maxBytes + limits.maxPatchBytes + 64 * 1024, truncate: true,
    }),
  ]);
  const entries = parseRaw(raw.stdout);
  const sections = patch.stdout.toString('utf8').split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));
  const out: FileDiff[] = [];
  let lines = 0;
  let bytes = 0;
  for (let i = 0; i < entries.length && i < sections.length; i++) {
    if (out.length + 1 > limits.maxFiles) break;
    const e = entries[i];
    let diff = patchBody(sections[i]);
    const size = Buffer.byteLength(diff);
    lines += diff === '' ? 0 : diff.split('\n').length - (diff.endsWith('\n') ? 1 : 0);
    bytes += size;
    if (lines > limits.maxLines || bytes > maxBytes) break;
    if (size > limits.maxPatchBytes) diff = '';
    out.push({
      diff, newPath: e.newPath, oldPath: e.oldPath, aMode: octal(e.aMode), bMode: octal(e.bMode),
      newFile: e.status === 'A', renamedFile: e.status === 'R', deletedFile: e.status === 'D',
    });
  }
  return out;
}

/**
 * The branches or tags whose tips contain the commit (Gitaly's ListBranchNamesContainingCommit
 * and ListTagNamesContainingCommit), short names in ref order.
 */
export async function refsContaining(gitDir: string, commitId: string, prefix: 'refs/heads/' | 'refs/tags/'): Promise<string[]> {
  const { stdout } = await runGitBytes(
    ['for-each-ref', `--contains=${commitId}`, '--format=%(refname)', prefix], { gitDir, maxBytes: 64 * 1024 * 1024 },
  );
  // Ref names hold no line breaks (ref-names.ts), so one per line is unambiguous.
  return stdout.toString('utf8').split('\n').filter(Boolean).map((r) => r.slice(prefix.length));
}
