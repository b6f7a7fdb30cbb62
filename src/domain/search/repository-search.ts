/**
 * Searching a project's repository at one commit, as the Service's basic search does it through
 * Gitaly (Gitlab::FileFinder, Repository#search_files_by_content / #search_files_by_name,
 * #find_commits_by_message):
 *
 * - blobs: `git grep` for the text as a fixed string without regard to case, text files only
 *   (`-I`), each match with two lines around it (Gitaly's context), one result per run of lines;
 *   and files whose path holds the text, presented from their first lines (a binary file with no
 *   data), read only for the page shown. A path found by its content is not listed again by its
 *   name. Results are ordered by path.
 * - the blob search's filters (Gitlab::Search::Query in FileFinder): `filename:` (the path ends
 *   with it), `path:` (the path holds it), `extension:` (the path ends with `.` and it), without
 *   regard to case, `*` standing for any run of characters; the rest of the text is what is
 *   searched for.
 * - commits: `git log --grep` for the text as a fixed string without regard to case, at most
 *   MAX_COMMITS (the Service's limit of 1000).
 *
 * The text always follows `-e` or is part of one `--grep=` argument, so it is never read as an
 * option; the commit is a resolved id. Output and time are bounded: a search that runs past its
 * bounds answers what it found before them.
 */
import { runGitBytes } from '../repositories/git-bytes.ts';
import { countLog, logPage, type CommitInfo } from '../repositories/git-read.ts';

/** Lines shown before and after a matching line (Gitaly's SearchFilesByContent context). */
export const CONTEXT_LINES = 2;
/** Most commits a commits search lists (ProjectSearchResults: `find_commits_by_message(…, 1000)`). */
export const MAX_COMMITS = 1000;
/** Most blob results a search collects before paging them. */
export const MAX_BLOB_RESULTS = 1000;
const MAX_GREP_BYTES = 8 * 1024 * 1024;
const MAX_TREE_BYTES = 16 * 1024 * 1024;
/** Longest a repository search runs: past it blobs answer what was found, commits GitTimedOut. */
export const SEARCH_TIMEOUT_MS = 10_000;
/** The first lines of a file found by its name (as much as a content match shows). */
const NAME_MATCH_LINES = CONTEXT_LINES * 2 + 1;
const NAME_MATCH_READ_BYTES = 64 * 1024;

export interface FoundBlob {
  /** The path without its extension (FoundBlob's basename). */
  basename: string;
  /** The lines shown; null for a file found by its name until withNameMatchData reads it. */
  data: string | null;
  /** The blob of a file found by its name. */
  blobId?: string;
  path: string;
  /** Line number of the first line of `data`. */
  startline: number;
}

export interface BlobQuery {
  term: string;
  filters: { kind: 'filename' | 'path' | 'extension'; pattern: RegExp }[];
}

const FILTER = /(?:^|\s)(filename|path|extension):(\S+)/gi;

/** Separates the blob search's `filename:`, `path:` and `extension:` filters from the text. */
export function parseBlobQuery(search: string): BlobQuery {
  const filters: BlobQuery['filters'] = [];
  const term = search.replace(FILTER, (_m, kind: string, value: string) => {
    const k = kind.toLowerCase() as 'filename' | 'path' | 'extension';
    const body = value.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*');
    const source = k === 'filename' ? `${body}$` : k === 'extension' ? `\\.${body}$` : body;
    filters.push({ kind: k, pattern: new RegExp(source, 'i') });
    return ' ';
  }).trim();
  return { term, filters };
}

function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

function basenameOf(path: string): string {
  const ext = extensionOf(path);
  return ext ? path.slice(0, -ext.length) : path;
}

interface GrepRecord { path: string; line: number; text: string }

/**
 * `git grep -z -n` output: `<commit>:<path>\0<line>\0<text>\n` per line, `--\n` between runs of
 * lines. Paths may hold any byte but NUL, so each record is read field by field.
 */
function parseGrep(out: Buffer, commit: string): GrepRecord[][] {
  const runs: GrepRecord[][] = [];
  let run: GrepRecord[] = [];
  let previous: GrepRecord | null = null;
  const prefix = Buffer.from(`${commit}:`);
  let i = 0;
  while (i < out.length) {
    if (out[i] === 0x2d && out[i + 1] === 0x2d && out[i + 2] === 0x0a) {
      if (run.length) runs.push(run);
      run = [];
      previous = null;
      i += 3;
      continue;
    }
    if (!out.subarray(i, i + prefix.length).equals(prefix)) break;
    const pathEnd = out.indexOf(0, i + prefix.length);
    const lineEnd = pathEnd < 0 ? -1 : out.indexOf(0, pathEnd + 1);
    const textEnd = lineEnd < 0 ? -1 : out.indexOf(0x0a, lineEnd + 1);
    // A record cut by the output bound ends the parse.
    if (textEnd < 0) break;
    const record = {
      path: out.subarray(i + prefix.length, pathEnd).toString('utf8'),
      line: Number(out.subarray(pathEnd + 1, lineEnd).toString('latin1')),
      text: out.subarray(lineEnd + 1, textEnd).toString('utf8'),
    };
    // Runs of two files touching each other are told apart by the path.
    if (previous && previous.path !== record.path) {
      runs.push(run);
      run = [];
    }
    run.push(record);
    previous = record;
    i = textEnd + 1;
  }
  if (run.length) runs.push(run);
  return runs;
}

async function grepContent(gitDir: string, commit: string, term: string): Promise<FoundBlob[]> {
  // As for commits: each line of the text would be a pattern of its own, and no line holds a break.
  if (/[\r\n]/.test(term)) return [];
  const { stdout } = await runGitBytes([
    'grep', '-I', '-i', '-F', '-n', '-z', '--no-color',
    `--before-context=${CONTEXT_LINES}`, `--after-context=${CONTEXT_LINES}`,
    '-e', term, commit, '--',
  ], { gitDir, maxBytes: MAX_GREP_BYTES, truncate: true, timeoutMs: SEARCH_TIMEOUT_MS, okExitCodes: [1] });
  return parseGrep(stdout, commit).map((run) => ({
    basename: basenameOf(run[0].path),
    data: run.map((r) => `${r.text}\n`).join(''),
    path: run[0].path,
    startline: run[0].line,
  }));
}

/** Files of the tree (not submodules), path and blob, in git's order (by path). */
async function treeFiles(gitDir: string, commit: string): Promise<{ path: string; id: string }[]> {
  const { stdout, truncated } = await runGitBytes(['ls-tree', '-r', '-z', '--full-tree', commit], {
    gitDir, maxBytes: MAX_TREE_BYTES, truncate: true, timeoutMs: SEARCH_TIMEOUT_MS,
  });
  const records = stdout.toString('utf8').split('\0');
  // The last record of a cut listing may be a cut path.
  if (truncated) records.pop();
  const out: { path: string; id: string }[] = [];
  for (const record of records) {
    const m = /^\d{6} blob ([0-9a-f]{40})\t(.*)$/s.exec(record);
    if (m) out.push({ id: m[1], path: m[2] });
  }
  return out;
}

/** The first lines of a file; '' for a binary one (a NUL in its first 8000 bytes, as git's `-I` decides). */
async function firstLines(gitDir: string, blobId: string): Promise<string> {
  const { stdout } = await runGitBytes(['cat-file', 'blob', blobId], { gitDir, maxBytes: NAME_MATCH_READ_BYTES, truncate: true });
  if (stdout.subarray(0, 8000).includes(0)) return '';
  const lines = stdout.toString('utf8').split('\n');
  // Each line kept with its line break, as a content match's lines are.
  return lines.slice(0, NAME_MATCH_LINES).join('\n') + (lines.length > NAME_MATCH_LINES ? '\n' : '');
}

/** Files read at once for a page's name matches (each is one git process). */
const READ_PARALLEL = 4;

/** The data of a page's files found by their name: their first lines, read for that page only. */
export async function withNameMatchData(gitDir: string, page: FoundBlob[]): Promise<(FoundBlob & { data: string })[]> {
  const out: (FoundBlob & { data: string })[] = [];
  for (let i = 0; i < page.length; i += READ_PARALLEL) {
    const batch = page.slice(i, i + READ_PARALLEL);
    const data = await Promise.all(batch.map((b) => (b.data === null && b.blobId ? firstLines(gitDir, b.blobId) : b.data ?? '')));
    out.push(...batch.map((b, j) => ({ ...b, data: data[j] })));
  }
  return out;
}

/**
 * The blobs search of one commit: content matches and path matches, filtered, ordered by path.
 * Files found by their name come without their data (withNameMatchData reads a page's).
 */
export async function searchBlobs(gitDir: string, commit: string, query: BlobQuery): Promise<FoundBlob[]> {
  if (query.term === '') return [];
  // Repository#search_files_by_name: leading slashes are no part of a path.
  const needle = query.term.replace(/^\/+/, '').toLowerCase();
  const kept = (path: string) => query.filters.every((f) => f.pattern.test(path));
  const [grepped, files] = await Promise.all([grepContent(gitDir, commit, query.term), treeFiles(gitDir, commit)]);
  const byContent = grepped.filter((b) => kept(b.path));
  const foundByContent = new Set(grepped.map((b) => b.path));
  const named: FoundBlob[] = files
    .filter((f) => needle !== '' && !foundByContent.has(f.path) && f.path.toLowerCase().includes(needle) && kept(f.path))
    .slice(0, MAX_BLOB_RESULTS)
    .map((f) => ({ basename: basenameOf(f.path), data: null, blobId: f.id, path: f.path, startline: 1 }));
  // Stable: a file's runs keep their order.
  const all = [...byContent, ...named].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return all.slice(0, MAX_BLOB_RESULTS);
}

/** One page of the commits of `commit` whose message holds `text`, with how many there are (at most MAX_COMMITS). */
export async function searchCommits(
  gitDir: string, commit: string, text: string, offset: number, perPage: number,
): Promise<{ commits: CommitInfo[]; total: number }> {
  // git would take each line of a text with line breaks as a pattern of its own; a message line
  // holds none, so such a text matches nothing.
  if (/[\r\n]/.test(text)) return { commits: [], total: 0 };
  const q = logQuery(commit, text);
  const bound = { timeoutMs: SEARCH_TIMEOUT_MS };
  if (offset >= MAX_COMMITS) return { commits: [], total: await countLog(gitDir, q, MAX_COMMITS, bound) };
  const [commits, total] = await Promise.all([
    logPage(gitDir, q, offset, Math.min(perPage, MAX_COMMITS - offset), bound),
    countLog(gitDir, q, MAX_COMMITS, bound),
  ]);
  return { commits, total };
}

function logQuery(commit: string, text: string) {
  return { rev: commit, all: false, firstParent: false, topo: false, grep: text };
}
