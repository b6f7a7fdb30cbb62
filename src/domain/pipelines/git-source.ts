/**
 * What a pipeline reads from the project's bare repository, through the system git (child
 * processes, never the event loop): the commit a ref names, files at that commit (the CI
 * configuration and its local includes), and the commit's metadata for the job entities.
 */
import { isValidRefName } from '../repositories/ref-name.ts';
import { runGit } from '../repositories/git-command.ts';

export interface CommitData {
  id: string;
  short_id: string;
  title: string;
  message: string;
  author_name: string;
  author_email: string;
  authored_date: string;
  committer_name: string;
  committer_email: string;
  committed_date: string;
  created_at: string;
  parent_ids: string[];
}

/** The Service's "no commit" id, the before_sha of pipelines not created by a push. */
export const BLANK_SHA = '0'.repeat(40);

/** A branch of that name first, then a tag (the Service's ref resolution for pipelines). */
export async function resolveRef(gitDir: string, ref: string): Promise<{ sha: string; tag: boolean } | null> {
  // git check-ref-format's rules (NUL and every control character included), before git runs.
  if (!isValidRefName(ref)) return null;
  for (const [prefix, tag] of [['refs/heads/', false], ['refs/tags/', true]] as const) {
    const { stdout, exitCode } = await runGit(
      ['rev-parse', '--verify', '--quiet', `${prefix}${ref}^{commit}`], { gitDir, okExitCodes: [1, 128] },
    );
    if (exitCode === 0 && /^[0-9a-f]{40}$/.test(stdout.trim())) return { sha: stdout.trim(), tag };
  }
  return null;
}

/**
 * Files read at a commit id: what a commit holds never changes, so the pipelines of one commit,
 * and the components included at one version, read each file with one git process in all rather
 * than one each (issue 28's 300-job bench). Oldest first out, bounded in bytes and entries; only
 * small files are kept, and never an answer of "no such file" (the commit's objects may be on
 * their way, or the repository replaced).
 */
const MAX_CACHED_FILE_BYTES = 256 * 1024;
const MAX_FILE_CACHE_BYTES = 8 * 1024 * 1024;
const MAX_FILE_CACHE_ENTRIES = 4096;
const fileCache = new Map<string, string>();
let fileCacheBytes = 0;

function rememberFile(key: string, content: string): void {
  if (content.length > MAX_CACHED_FILE_BYTES || fileCache.has(key)) return;
  fileCache.set(key, content);
  fileCacheBytes += content.length;
  while (fileCacheBytes > MAX_FILE_CACHE_BYTES || fileCache.size > MAX_FILE_CACHE_ENTRIES) {
    const [oldest, value] = fileCache.entries().next().value!;
    fileCache.delete(oldest);
    fileCacheBytes -= value.length;
  }
}

/**
 * A file's content at `sha`, or null when there is no such file. `cat-file blob` rather than
 * `show`: a directory of that name is "no file", not a tree listing.
 */
export async function readFileAt(gitDir: string, sha: string, path: string): Promise<string | null> {
  if (path === '' || path.length > 4096 || path.startsWith('-') || path.split('/').includes('..') || /[\x00-\x1f\x7f]/.test(path)) return null;
  // Only a full commit id names fixed content; a ref name may move.
  const key = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(sha) ? `${gitDir}\0${sha}\0${path}` : null;
  const cached = key === null ? undefined : fileCache.get(key);
  if (cached !== undefined) return cached;
  const { stdout, exitCode } = await runGit(['cat-file', 'blob', `${sha}:${path}`], { gitDir, okExitCodes: [128] });
  if (exitCode !== 0) return null;
  if (key !== null) rememberFile(key, stdout);
  return stdout;
}

const FIELD = '%x1f';
const FORMAT = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B'].join(FIELD);

function utc(isoWithOffset: string): string {
  return new Date(isoWithOffset).toISOString();
}

export async function readCommit(gitDir: string, sha: string): Promise<CommitData> {
  const { stdout } = await runGit(['log', '-1', `--format=${FORMAT}`, sha, '--'], { gitDir });
  const [id, parents, an, ae, ad, cn, ce, cd, ...rest] = stdout.split('\x1f');
  const message = rest.join('\x1f').replace(/\n+$/, '');
  return {
    id,
    short_id: id.slice(0, 8),
    title: message.split('\n', 1)[0],
    message: `${message}\n`,
    author_name: an,
    author_email: ae,
    authored_date: utc(ad),
    committer_name: cn,
    committer_email: ce,
    committed_date: utc(cd),
    created_at: utc(cd),
    parent_ids: parents.trim() === '' ? [] : parents.trim().split(' '),
  };
}

/** Files one tree listing may name before it is cut (rules:exists and local include wildcards). */
const MAX_TREE_FILES = 50_000;

/** Every file path of the commit's tree. */
export async function listTree(gitDir: string, sha: string): Promise<string[]> {
  const { stdout, exitCode } = await runGit(['ls-tree', '-r', '-z', '--name-only', sha], { gitDir, okExitCodes: [128] });
  if (exitCode !== 0) return [];
  return stdout.split('\0').filter((p) => p !== '').slice(0, MAX_TREE_FILES);
}

/** Paths that differ between two commits, or null when `from` is not a commit of this repository. */
export async function changedPaths(gitDir: string, from: string, to: string): Promise<string[] | null> {
  if (!/^[0-9a-f]{40}$/.test(from) || from === BLANK_SHA) return null;
  const { stdout, exitCode } = await runGit(['diff', '--name-only', '-z', '--no-renames', from, to, '--'], { gitDir, okExitCodes: [128] });
  if (exitCode !== 0) return null;
  return stdout.split('\0').filter((p) => p !== '').slice(0, MAX_TREE_FILES);
}

/** The commit a branch, tag or commit id names, or null. */
export async function resolveCommitish(gitDir: string, ref: string): Promise<string | null> {
  if (ref === '' || ref.length > 1024 || ref.startsWith('-') || /[\s~^:?*[\\\x00-\x1f\x7f]/.test(ref) || ref.includes('..')) return null;
  const { stdout, exitCode } = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { gitDir, okExitCodes: [1, 128] });
  return exitCode === 0 && /^[0-9a-f]{40}$/.test(stdout.trim()) ? stdout.trim() : null;
}
