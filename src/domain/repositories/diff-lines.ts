/**
 * Finding a line of a commit's diff for a commit comment (lib/api/commits.rb, POST …/comments, of
 * the Service 15.2): the diff of the file against the first parent is walked as
 * Gitlab::Diff::Parser walks it, and the comment sits on the first added (`new`) or removed
 * (`old`) line whose position in the new file is the line asked for. A line that is not in the
 * diff makes an ordinary comment on the commit.
 */
import { runGitBytes } from './git-bytes.ts';
import type { CommitInfo } from './git-read.ts';

export interface DiffLine {
  oldLine: number;
  newLine: number;
}

/** A diff larger than this is not walked (the comment then is an ordinary one). */
const MAX_DIFF_BYTES = 16 * 1024 * 1024;

export async function findDiffLine(
  gitDir: string, commit: CommitInfo, path: string, line: number, lineType: 'new' | 'old',
): Promise<DiffLine | null> {
  const pathspec = `:(literal)${path}`;
  const args = commit.parentIds.length > 0
    ? ['diff', '--no-color', '--no-ext-diff', '--no-renames', '-U3', commit.parentIds[0], commit.id, '--', pathspec]
    : ['diff-tree', '--no-color', '--no-ext-diff', '--no-renames', '-p', '-U3', '--root', commit.id, '--', pathspec];
  let text: string;
  try {
    text = (await runGitBytes(args, { gitDir, maxBytes: MAX_DIFF_BYTES })).stdout.toString('utf8');
  } catch {
    return null;
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
    if (!inHunk) continue;
    const marker = raw[0];
    if (marker === '+') {
      if (lineType === 'new' && newPos === line) return { oldLine: oldPos, newLine: newPos };
      newPos++;
    } else if (marker === '-') {
      if (lineType === 'old' && newPos === line) return { oldLine: oldPos, newLine: newPos };
      oldPos++;
    } else if (marker === ' ') {
      oldPos++;
      newPos++;
    } else if (marker !== '\\') {
      inHunk = false;
    }
  }
  return null;
}
