/**
 * Comparing two commits (the Service's GET /projects/:id/repository/compare, CompareService and
 * Gitlab::Git::Compare of 15.2) and their merge base (Gitlab::Git::MergeBase).
 *
 * The commits are `from..to` oldest first, whatever `straight`; the diffs are `from...to` (against
 * the merge base) or, with `straight`, `from..to`, with renames found. The diffs obey the limits
 * the Service's DiffCollection applies to the API (Commit.diff_safe_max_files / _lines: a tenth
 * of the application setting defaults diff_max_files 1000 and diff_max_lines 50000; 5 KiB a file
 * on average for the bytes): past any of them the list stops and `overflow` is set (the
 * entity's `compare_timeout`). A single file's patch above the Service's diff_max_patch_bytes
 * default (200 KiB) is `too_large` and has an empty diff, and does not count towards the bytes.
 */
import { runGit } from './git-command.ts';
import { GitTimedOut, runGitBytes } from './git-bytes.ts';
import { logRange, readCommits, resolveCommit, resolveCommits, type CommitInfo } from './git-read.ts';
import { COMMIT_ID } from './ref-names.ts';

export const DIFF_MAX_FILES = 100;
export const DIFF_MAX_LINES = 5000;
export const DIFF_MAX_BYTES = DIFF_MAX_FILES * 5 * 1024;
export const DIFF_MAX_PATCH_BYTES = 200 * 1024;
/** Most commits a compare lists (the Service lists all; kiln bounds the memory one answer takes). */
export const COMPARE_MAX_COMMITS = 10_000;
/** A diff git has not written within this long is cut where it is, as an overflow. */
const DIFF_TIMEOUT_MS = 30_000;
/** Most patch output read at all: well past every limit above, for the too-large files among them. */
const MAX_PATCH_OUTPUT = 64 * 1024 * 1024;

export interface FileDiff {
  oldPath: string;
  newPath: string;
  aMode: string;
  bMode: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  diff: string;
  tooLarge: boolean;
}

export interface Comparison {
  /** The resolved `from` (null when it names no commit). */
  start: string | null;
  head: string;
  mergeBase: string | null;
  same: boolean | null;
  commits: CommitInfo[];
  diffs: FileDiff[];
  overflow: boolean;
}

interface RawEntry {
  aMode: string;
  bMode: string;
  status: string;
  oldPath: string;
  newPath: string;
}

function parseRaw(out: string): RawEntry[] {
  const parts = out.split('\0');
  const entries: RawEntry[] = [];
  for (let i = 0; i < parts.length;) {
    const m = /^:(\d{6}) (\d{6}) [0-9a-f]{40} [0-9a-f]{40} ([A-Z])\d*$/.exec(parts[i]);
    if (!m) {
      i++;
      continue;
    }
    const two = m[3] === 'R' || m[3] === 'C';
    const oldPath = parts[i + 1] ?? '';
    const newPath = two ? (parts[i + 2] ?? '') : oldPath;
    entries.push({ aMode: m[1], bMode: m[2], status: m[3], oldPath, newPath });
    i += two ? 3 : 2;
  }
  return entries;
}

/**
 * One patch per file, in the order git wrote them: a line that starts with `diff --git ` is always
 * a header (content lines start with ' ', '+' or '-'), and paths git quotes hold no line break.
 * Only the hunks are kept, as the Service's diffs hold (a binary file keeps git's one line).
 */
function splitPatches(text: string): string[] {
  const patches: string[] = [];
  const starts: number[] = [];
  const re = /^diff --git /gm;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index);
  for (let i = 0; i < starts.length; i++) {
    const chunk = text.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : text.length);
    const hunk = /^@@ /m.exec(chunk);
    if (hunk) patches.push(chunk.slice(hunk.index));
    else {
      const binary = /^Binary files .* differ\n/m.exec(chunk);
      patches.push(binary ? binary[0] : '');
    }
  }
  return patches;
}

export async function mergeBase(gitDir: string, commits: string[]): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['merge-base', ...commits], { gitDir, okExitCodes: [1] });
  const sha = stdout.trim();
  return exitCode === 0 && COMMIT_ID.test(sha) ? sha : null;
}

async function diffFiles(gitDir: string, base: string, head: string): Promise<{ diffs: FileDiff[]; overflow: boolean }> {
  const common = ['--no-color', '--no-ext-diff', '--find-renames', '--no-abbrev'];
  const { stdout: rawOut } = await runGitBytes(
    ['diff', '--raw', '-z', ...common, base, head, '--'], { gitDir, maxBytes: MAX_PATCH_OUTPUT },
  );
  const raw = parseRaw(rawOut.toString('utf8'));
  // Only the files that can be listed at all are diffed.
  const listed = raw.slice(0, DIFF_MAX_FILES);
  let overflow = raw.length > DIFF_MAX_FILES;
  if (listed.length === 0) return { diffs: [], overflow };
  let patchText: string;
  let cut = false;
  try {
    const out = await runGitBytes(
      ['diff', '-p', '-U3', ...common, base, head, '--', ...listed.flatMap((e) => [`:(literal)${e.oldPath}`, `:(literal)${e.newPath}`])],
      { gitDir, maxBytes: MAX_PATCH_OUTPUT, timeoutMs: DIFF_TIMEOUT_MS, truncate: true },
    );
    patchText = out.stdout.toString('utf8');
    cut = out.truncated === true;
  } catch (err) {
    if (err instanceof GitTimedOut) return { diffs: [], overflow: true };
    throw err;
  }
  const patches = splitPatches(patchText);
  const diffs: FileDiff[] = [];
  let lines = 0;
  let bytes = 0;
  for (let i = 0; i < listed.length; i++) {
    const e = listed[i];
    // A cut output's last patch may be partial: it and everything after it overflow.
    if (i >= patches.length || (cut && i === patches.length - 1)) {
      overflow = true;
      break;
    }
    let diff = patches[i];
    const tooLarge = Buffer.byteLength(diff) > DIFF_MAX_PATCH_BYTES;
    if (tooLarge) diff = '';
    lines += diff === '' ? 0 : diff.split('\n').length - (diff.endsWith('\n') ? 1 : 0);
    bytes += Buffer.byteLength(diff);
    if (lines > DIFF_MAX_LINES || bytes > DIFF_MAX_BYTES) {
      overflow = true;
      break;
    }
    diffs.push({
      oldPath: e.oldPath, newPath: e.newPath, aMode: e.aMode === '000000' ? '0' : e.aMode, bMode: e.bMode === '000000' ? '0' : e.bMode,
      newFile: e.status === 'A', renamedFile: e.status === 'R', deletedFile: e.status === 'D', diff, tooLarge,
    });
  }
  return { diffs, overflow };
}

/**
 * `from` and `to` are revisions the caller checked with readableRevision (null: one that cannot
 * name a commit). Null when `to` names no commit (the Service's 404 Ref); a `from` that names none
 * compares nothing.
 */
export async function compare(gitDir: string, from: string | null, to: string, straight: boolean): Promise<Comparison | null> {
  const head = await resolveCommit(gitDir, to);
  if (!head) return null;
  const start = from === null ? null : await resolveCommit(gitDir, from);
  if (!start) return { start: null, head, mergeBase: null, same: null, commits: [], diffs: [], overflow: false };
  const base = await mergeBase(gitDir, [start, head]);
  if (start === head) return { start, head, mergeBase: base, same: true, commits: [], diffs: [], overflow: false };
  const commits = (await logRange(gitDir, start, head, COMPARE_MAX_COMMITS)).reverse();
  // Against the merge base unless straight; unrelated histories have none and compare straight.
  const { diffs, overflow } = await diffFiles(gitDir, straight ? start : (base ?? start), head);
  return { start, head, mergeBase: base, same: false, commits, diffs, overflow };
}

/** The commits each ref names, in order (null for a ref that names none, or that cannot: null). */
export async function resolveAll(gitDir: string, refs: (string | null)[]): Promise<(string | null)[]> {
  const readable = refs.filter((r): r is string => r !== null);
  const resolved = await resolveCommits(gitDir, readable);
  let at = 0;
  return refs.map((r) => (r === null ? null : resolved[at++]));
}

export async function readMergeBase(gitDir: string, commits: string[]): Promise<CommitInfo | null> {
  const sha = await mergeBase(gitDir, commits);
  return sha ? ((await readCommits(gitDir, [sha])).get(sha) ?? null) : null;
}
