/**
 * Reading a project's repository for the API (branches, tags, commits, trees, files): each
 * function runs the system git in a child process and parses its machine-readable output (`-z`
 * NUL-separated records wherever a name may hold any character). Every name handed in has been
 * validated by the caller (ref-names.ts, file-paths.ts); revisions are passed after
 * `--end-of-options` so none can be read as an option.
 */
import { runGit } from './git-command.ts';
import { runGitBytes } from './git-bytes.ts';
import { COMMIT_ID } from './ref-names.ts';
import { readRef } from './ref-files.ts';
import { cacheKey, remembered } from './repository-cache.ts';

/** Most output kiln parses in memory from one listing (refs, a log page, a tree). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

export interface CommitInfo {
  id: string;
  parentIds: string[];
  authorName: string;
  authorEmail: string;
  authoredDate: string;
  committerName: string;
  committerEmail: string;
  committedDate: string;
  message: string;
}

const COMMIT_FORMAT = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B'].join('%x1f');

function utc(isoWithOffset: string): string {
  return new Date(isoWithOffset).toISOString();
}

function parseCommit(record: string): CommitInfo {
  const [id, parents, an, ae, ad, cn, ce, cd, ...rest] = record.split('\x1f');
  return {
    id, parentIds: parents.trim() === '' ? [] : parents.trim().split(' '),
    authorName: an, authorEmail: ae, authoredDate: utc(ad), committerName: cn, committerEmail: ce, committedDate: utc(cd),
    message: rest.join('\x1f'),
  };
}

/** The commit a revision names (branch, tag, id, expression), or null. */
export async function resolveCommit(gitDir: string, rev: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
    { gitDir, okExitCodes: [1, 128] },
  );
  const sha = stdout.trim();
  return exitCode === 0 && COMMIT_ID.test(sha) ? sha : null;
}

/**
 * The object a full ref points at (`refs/heads/x`), or null when there is no such ref: read from
 * the ref files in this process (ref-files.ts), git only for what those cannot answer.
 */
export async function refTarget(gitDir: string, fullRef: string): Promise<string | null> {
  const read = await readRef(gitDir, fullRef);
  if (read !== undefined) return read;
  const { stdout, exitCode } = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', fullRef], { gitDir, okExitCodes: [1, 128] },
  );
  return exitCode === 0 && COMMIT_ID.test(stdout.trim()) ? stdout.trim() : null;
}

/** The tips of the named branches that exist, in one git process. */
export async function branchTips(gitDir: string, names: string[]): Promise<Map<string, string>> {
  const { stdout } = await runGit(
    ['for-each-ref', '--format=%(refname)%00%(objectname)', ...names.map((n) => `refs/heads/${n}`)],
    { gitDir },
  );
  const wanted = new Set(names);
  const tips = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [ref, sha] = line.split('\0');
    const name = ref?.slice('refs/heads/'.length);
    // for-each-ref matches whole path components below a pattern too (refs/heads/a/b for a).
    if (name && wanted.has(name) && COMMIT_ID.test(sha ?? '')) tips.set(name, sha);
  }
  return tips;
}

export async function hasBranches(gitDir: string): Promise<boolean> {
  const { stdout } = await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir });
  return stdout.trim() !== '';
}

export interface RefEntry {
  /** Without the `refs/heads/` or `refs/tags/` prefix. */
  name: string;
  /** What the ref points at: the commit, or for an annotated tag the tag object. */
  target: string;
  commitId: string;
  /** The annotated tag's message; null for a branch or a lightweight tag. */
  tagMessage: string | null;
  /** Committer date of the commit, for ordering by `updated`. */
  committedDate: string;
}

/** Branches (`refs/heads/`) or tags (`refs/tags/`), with the commits they name. */
export async function listRefs(gitDir: string, prefix: 'refs/heads/' | 'refs/tags/', exactName?: string): Promise<RefEntry[]> {
  const format = [
    '%(refname)', '%(objectname)', '%(objecttype)', '%(*objectname)', '%(*objecttype)',
    '%(committerdate:iso-strict)', '%(*committerdate:iso-strict)', '%(contents)',
  ].join('%00');
  const pattern = exactName === undefined ? prefix : `${prefix}${exactName}`;
  const { stdout } = await runGitBytes(['for-each-ref', `--format=${format}%00%01`, pattern], { gitDir, maxBytes: MAX_LISTING_BYTES });
  const out: RefEntry[] = [];
  for (const record of stdout.toString('utf8').split('\x00\x01\n')) {
    if (record === '') continue;
    const [refname, objectname, objecttype, peeled, peeledType, cdate, peeledDate, contents] = record.split('\x00');
    const name = refname.slice(prefix.length);
    if (exactName !== undefined && name !== exactName) continue;
    if (objecttype === 'commit') out.push({ name, target: objectname, commitId: objectname, tagMessage: null, committedDate: cdate });
    // An annotated tag of a commit; tags of trees or blobs, and tags of tags, name no commit.
    else if (objecttype === 'tag' && peeledType === 'commit') out.push({ name, target: objectname, commitId: peeled, tagMessage: contents.replace(/\n+$/, ''), committedDate: peeledDate });
  }
  return out;
}

/** Branch names whose tips are reachable from `into` (merged into the default branch). */
export async function mergedBranches(gitDir: string, into: string): Promise<Set<string>> {
  // Ref names hold no line breaks (ref-names.ts), so one per line is unambiguous.
  const { stdout } = await runGitBytes(
    ['for-each-ref', `--merged=${into}`, '--format=%(refname)', 'refs/heads/'],
    { gitDir, maxBytes: MAX_LISTING_BYTES },
  );
  return new Set(stdout.toString('utf8').split('\n').filter(Boolean).map((r) => r.slice('refs/heads/'.length)));
}

export async function readCommits(gitDir: string, shas: string[]): Promise<Map<string, CommitInfo>> {
  if (shas.length === 0) return new Map();
  const { stdout } = await runGitBytes(
    ['log', '-z', '--no-walk=unsorted', `--format=${COMMIT_FORMAT}`, '--end-of-options', ...new Set(shas), '--'],
    { gitDir, maxBytes: MAX_LISTING_BYTES },
  );
  const commits = stdout.toString('utf8').split('\0').filter(Boolean).map(parseCommit);
  return new Map(commits.map((c) => [c.id, c]));
}

export async function readCommit(gitDir: string, sha: string): Promise<CommitInfo | null> {
  return (await readCommits(gitDir, [sha])).get(sha) ?? null;
}

/**
 * A commit by its id, kept once read (repository-cache.ts: an id names immutable content); null
 * when git cannot read it (not kept: a failure may be passing). The value is shared: never change it.
 */
export async function readCommitRemembered(gitDir: string, sha: string): Promise<CommitInfo | null> {
  if (!COMMIT_ID.test(sha)) return null;
  try {
    // The first commit git answers, as for a ref: an id of an annotated tag reads as its commit.
    return await remembered(cacheKey('commit', gitDir, sha), async () => [...(await readCommits(gitDir, [sha])).values()][0] ?? null);
  } catch {
    return null;
  }
}

export interface LogQuery {
  /** A validated revision; ignored with `all`. */
  rev: string;
  all: boolean;
  path?: string;
  since?: string;
  until?: string;
  firstParent: boolean;
  topo: boolean;
  /**
   * Only commits whose message holds this text, as a fixed string without regard to case (the
   * search API's commits scope). One `--grep=` argument, so the text is never read as an option.
   */
  grep?: string;
}

function logArgs(q: LogQuery): string[] {
  return [
    ...(q.since ? [`--since=${q.since}`] : []),
    ...(q.until ? [`--until=${q.until}`] : []),
    ...(q.firstParent ? ['--first-parent'] : []),
    ...(q.topo ? ['--topo-order'] : []),
    ...(q.grep !== undefined ? ['--regexp-ignore-case', '--fixed-strings', `--grep=${q.grep}`] : []),
    ...(q.all ? ['--all'] : ['--end-of-options', q.rev]),
    '--', ...(q.path ? [q.path] : []),
  ];
}

/**
 * One page of `git log`: `max` commits after skipping `skip`. `timeoutMs` bounds a walk that may
 * read the whole history without finding much (a message search); past it GitTimedOut.
 */
export async function logPage(
  gitDir: string, q: LogQuery, skip: number, max: number, o: { timeoutMs?: number } = {},
): Promise<CommitInfo[]> {
  const { stdout } = await runGitBytes(
    ['log', '-z', `--format=${COMMIT_FORMAT}`, `--skip=${skip}`, `--max-count=${max}`, ...logArgs(q)],
    { gitDir, maxBytes: MAX_LISTING_BYTES, ...o },
  );
  return stdout.toString('utf8').split('\0').filter(Boolean).map(parseCommit);
}

/** How many commits the query selects, counting no further than `cap` (`timeoutMs` as logPage). */
export async function countLog(gitDir: string, q: LogQuery, cap: number, o: { timeoutMs?: number } = {}): Promise<number> {
  const { stdout } = await runGitBytes(['rev-list', '--count', `--max-count=${cap}`, ...logArgs(q)], { gitDir, maxBytes: 64, ...o });
  return Number(stdout.toString('latin1').trim()) || 0;
}

export interface CommitStats {
  additions: number;
  deletions: number;
  total: number;
}

/** Lines added and removed against the first parent (the whole tree for a root commit). */
export async function commitStats(gitDir: string, commit: CommitInfo): Promise<CommitStats> {
  const args = commit.parentIds.length > 0
    ? ['diff', '--numstat', '-z', '--no-renames', commit.parentIds[0], commit.id, '--']
    : ['diff-tree', '--numstat', '-z', '--no-renames', '-r', '--root', commit.id, '--'];
  const { stdout } = await runGitBytes(args, { gitDir, maxBytes: MAX_LISTING_BYTES });
  let additions = 0;
  let deletions = 0;
  for (const record of stdout.toString('utf8').split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(record);
    if (!m) continue;
    additions += m[1] === '-' ? 0 : Number(m[1]);
    deletions += m[2] === '-' ? 0 : Number(m[2]);
  }
  return { additions, deletions, total: additions + deletions };
}

export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  id: string;
  /** Path from the repository root. */
  path: string;
  name: string;
  /** Blob size in bytes; null for trees and submodules. */
  size: number | null;
}

function parseTree(stdout: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const record of stdout.toString('utf8').split('\0')) {
    const m = /^(\d{6}) (blob|tree|commit) ([0-9a-f]{40}) +(\d+|-)\t(.*)$/s.exec(record);
    if (!m) continue;
    const path = m[5];
    out.push({
      mode: m[1], type: m[2] as TreeEntry['type'], id: m[3], path,
      name: path.slice(path.lastIndexOf('/') + 1), size: m[4] === '-' ? null : Number(m[4]),
    });
  }
  return out;
}

/** The entry at `path` in `commit` (a file, a directory or a submodule), or null. */
export async function entryAt(gitDir: string, commit: string, path: string): Promise<TreeEntry | null> {
  const { stdout } = await runGitBytes(['ls-tree', '-z', '-l', '--full-tree', commit, '--', path], { gitDir, maxBytes: MAX_LISTING_BYTES });
  return parseTree(stdout).find((e) => e.path === path) ?? null;
}

/** entryAt for a resolved commit id, kept once read (repository-cache.ts); the value is shared. */
export async function entryAtRemembered(gitDir: string, commit: string, path: string): Promise<TreeEntry | null> {
  if (!COMMIT_ID.test(commit)) return entryAt(gitDir, commit, path);
  return remembered(cacheKey('entry', gitDir, commit, path), () => entryAt(gitDir, commit, path));
}

/** The entries of the directory `path` ('' for the root), recursively with `recursive`. */
export async function listTree(gitDir: string, commit: string, path: string, recursive: boolean): Promise<TreeEntry[]> {
  const args = ['ls-tree', '-z', '-l', '--full-tree', ...(recursive ? ['-r', '-t'] : []), commit, '--', ...(path ? [`${path}/`] : [])];
  const { stdout } = await runGitBytes(args, { gitDir, maxBytes: MAX_LISTING_BYTES });
  return parseTree(stdout);
}

/**
 * listTree for a resolved commit id, kept once read (repository-cache.ts; a listing too large for
 * it is read each time). The value is shared: never change it.
 */
export async function listTreeRemembered(gitDir: string, commit: string, path: string, recursive: boolean): Promise<TreeEntry[]> {
  if (!COMMIT_ID.test(commit)) return listTree(gitDir, commit, path, recursive);
  return remembered(
    cacheKey('tree', gitDir, commit, path, recursive ? 'recursive' : 'one level'), () => listTree(gitDir, commit, path, recursive),
    (entries) => entries.reduce((n, e) => n + (e.path.length + e.name.length) * 2 + 160, 0),
  );
}

/** Every file of a commit's tree, path → mode and blob (submodules included as mode 160000). */
export async function flatTree(gitDir: string, commit: string): Promise<Map<string, { mode: string; id: string }>> {
  const { stdout } = await runGitBytes(['ls-tree', '-z', '-r', '--full-tree', commit], { gitDir, maxBytes: MAX_LISTING_BYTES });
  return new Map(parseTreeShort(stdout).map((e) => [e.path, { mode: e.mode, id: e.id }]));
}

function parseTreeShort(stdout: Buffer): { mode: string; id: string; path: string }[] {
  const out: { mode: string; id: string; path: string }[] = [];
  for (const record of stdout.toString('utf8').split('\0')) {
    const m = /^(\d{6}) (?:blob|tree|commit) ([0-9a-f]{40})\t(.*)$/s.exec(record);
    if (m) out.push({ mode: m[1], id: m[2], path: m[3] });
  }
  return out;
}

export async function readBlob(gitDir: string, blobId: string, maxBytes: number): Promise<Buffer> {
  return (await runGitBytes(['cat-file', 'blob', blobId], { gitDir, maxBytes })).stdout;
}

/** The last commit reachable from `commit` that changed `path`. */
export async function lastCommitFor(gitDir: string, commit: string, path: string): Promise<string | null> {
  const { stdout } = await runGit(['rev-list', '-1', '--end-of-options', commit, '--', path], { gitDir });
  return COMMIT_ID.test(stdout.trim()) ? stdout.trim() : null;
}

export interface BlameRange {
  commitId: string;
  lines: string[];
}

/**
 * `git blame --porcelain`, as consecutive runs of lines from one commit. `timeoutMs` bounds a
 * blame over a long history (past it GitTimedOut), `maxBytes` its output (GitOutputTooLarge).
 */
export async function blame(
  gitDir: string, commit: string, path: string, o: { timeoutMs?: number; maxBytes?: number } = {},
): Promise<BlameRange[]> {
  // `commit` is a resolved commit id here (blame knows no --end-of-options).
  if (!COMMIT_ID.test(commit)) return [];
  const { stdout } = await runGitBytes(
    ['blame', '--porcelain', commit, '--', path], { gitDir, maxBytes: o.maxBytes ?? MAX_LISTING_BYTES, timeoutMs: o.timeoutMs },
  );
  const ranges: BlameRange[] = [];
  let current: string | null = null;
  for (const line of stdout.toString('utf8').split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(line);
    if (header) {
      current = header[1];
      continue;
    }
    if (line.startsWith('\t') && current) {
      const last = ranges[ranges.length - 1];
      if (last && last.commitId === current) last.lines.push(line.slice(1));
      else ranges.push({ commitId: current, lines: [line.slice(1)] });
    }
  }
  return ranges;
}

/**
 * The commits reachable from `head` and not from `exclude` (`exclude..head`), newest first, at
 * most `max`, skipping merges with `noMerges`. Both are resolved commit ids.
 */
export async function logRange(
  gitDir: string, exclude: string | null, head: string, max: number, o: { noMerges?: boolean } = {},
): Promise<CommitInfo[]> {
  const { stdout } = await runGitBytes(
    ['log', '-z', `--format=${COMMIT_FORMAT}`, `--max-count=${max}`, ...(o.noMerges ? ['--no-merges'] : []),
      '--end-of-options', head, ...(exclude ? [`^${exclude}`] : []), '--'],
    { gitDir, maxBytes: MAX_LISTING_BYTES },
  );
  return stdout.toString('utf8').split('\0').filter(Boolean).map(parseCommit);
}

/**
 * The blob an id names (full or abbreviated hex, as the Service's Blob.raw takes), or null for
 * anything else: another object type, an unknown or ambiguous id, or text that is not hex.
 */
export async function resolveBlob(gitDir: string, id: string): Promise<string | null> {
  if (!/^[0-9a-fA-F]{4,40}$/.test(id)) return null;
  const { stdout, exitCode } = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${id.toLowerCase()}^{blob}`], { gitDir, okExitCodes: [1, 128] },
  );
  return exitCode === 0 && COMMIT_ID.test(stdout.trim()) ? stdout.trim() : null;
}

export async function objectSize(gitDir: string, id: string): Promise<number> {
  return Number((await runGit(['cat-file', '-s', id], { gitDir })).stdout.trim());
}

/**
 * The commit each revision names, in order, with one git process whatever their number (null
 * for one that names none). Each revision must be readable (ref-names.ts readableRevision): no
 * line breaks, so one per line of `cat-file --batch-check` is unambiguous.
 */
export async function resolveCommits(gitDir: string, revs: string[]): Promise<(string | null)[]> {
  if (revs.length === 0) return [];
  const { stdout } = await runGitBytes(
    ['cat-file', '--batch-check=%(objectname) %(objecttype)'],
    { gitDir, input: revs.map((r) => `${r}^{commit}\n`).join(''), maxBytes: MAX_LISTING_BYTES },
  );
  const lines = stdout.toString('utf8').split('\n');
  return revs.map((_, i) => {
    const m = /^([0-9a-f]{40}) commit$/.exec(lines[i] ?? '');
    return m ? m[1] : null;
  });
}
