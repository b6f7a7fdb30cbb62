/**
 * The last commit of each entry of a directory (the tree page's "last commit" column, the
 * Service's logs_tree / ListLastCommitsForTree), computed with at most two `git log` walks over
 * the directory instead of one process per entry: the walk lists the paths each commit changed
 * under the directory, newest first, and the first commit that names a path below an entry is
 * that entry's last commit. The walks are bounded in commits, bytes and time; entries they did
 * not reach stay without a commit (the page shows none rather than waiting on a history of
 * millions of commits). The Service too computes this per page of entries (25 at a time).
 *
 * Merge commits list no paths (`git log` shows no diff for a merge without `-m`), so an entry
 * last changed by a merge's own resolution is attributed to the commit before it; a simplified
 * history (`-- <dir>`) already skips merges that took one side unchanged, as `git log -- <path>`
 * does for the Service.
 *
 * Results are kept per (commit, entry path) in the repositories' bounded cache
 * (repository-cache.ts): a commit id names immutable history, so an answer never goes stale.
 */
import { runGitBytes } from './git-bytes.ts';
import { COMMIT_ID } from './ref-names.ts';
import { cacheKey, repositoryCache } from './repository-cache.ts';

export interface LastCommit {
  id: string;
  title: string;
  committedDate: string;
}

/** Most commits the walks read, and how many the first, short one reads. */
export const MAX_WALK_COMMITS = 2000;
const FIRST_WALK_COMMITS = 100;
/** Most bytes of `git log --name-only` one walk keeps. */
const MAX_WALK_BYTES = 8 * 1024 * 1024;
/** A walk longer than this answers with what it found. */
const WALK_TIMEOUT_MS = 3000;
function remember(key: string, value: LastCommit | null): void {
  repositoryCache.set(key, value, value ? (value.id.length + value.committedDate.length + value.title.length) * 2 : 8);
}

const keyOf = (gitDir: string, commit: string, path: string) => cacheKey('last-commit', gitDir, commit, path);

/** The commit's records: `\x01<id>\x1f<committer date>\x1f<subject>` followed by its changed paths. */
function parseWalk(stdout: Buffer, truncated: boolean): { commit: LastCommit; paths: string[] }[] {
  const out: { commit: LastCommit; paths: string[] }[] = [];
  const tokens = stdout.toString('utf8').split('\0');
  // A walk cut short ends in a record that may be missing paths: it is dropped.
  if (truncated) tokens.pop();
  for (let token of tokens) {
    token = token.replace(/^\n+/, '');
    if (token === '') continue;
    if (token.startsWith('\x01')) {
      const nl = token.indexOf('\n');
      const header = nl < 0 ? token.slice(1) : token.slice(1, nl);
      const [id, date, ...subject] = header.split('\x1f');
      if (!id || !COMMIT_ID.test(id) || !date) continue;
      out.push({ commit: { id, committedDate: new Date(date).toISOString(), title: subject.join('\x1f') }, paths: [] });
      const rest = nl < 0 ? '' : token.slice(nl).replace(/^\n+/, '');
      if (rest !== '') out[out.length - 1]!.paths.push(rest);
    } else if (out.length > 0) {
      out[out.length - 1]!.paths.push(token);
    }
  }
  if (truncated) out.pop();
  return out;
}

/**
 * The last commit of each of `entries` (paths from the repository root, all directly inside
 * `dir`, '' for the root) as of `commit`, a resolved commit id. Entries absent from the answer
 * were not reached within the walk's bounds.
 */
export async function lastCommitsForEntries(
  gitDir: string, commit: string, dir: string, entries: string[],
): Promise<Map<string, LastCommit>> {
  const found = new Map<string, LastCommit>();
  if (!COMMIT_ID.test(commit) || entries.length === 0) return found;
  const wanted = new Set<string>();
  for (const e of entries) {
    const key = keyOf(gitDir, commit, e);
    if (repositoryCache.has(key)) {
      const hit = repositoryCache.get<LastCommit | null>(key);
      if (hit) found.set(e, hit);
    } else {
      wanted.add(e);
    }
  }
  if (wanted.size === 0) return found;

  const prefix = dir === '' ? '' : `${dir}/`;
  // Most directories meet all their entries in their recent history: a short walk first, the
  // long one (skipping what the short one read) only for entries still without a commit.
  let read = 0;
  let complete = false;
  for (const max of [FIRST_WALK_COMMITS, MAX_WALK_COMMITS - FIRST_WALK_COMMITS]) {
    const { stdout, truncated } = await runGitBytes(
      ['log', '-z', '--name-only', '--no-renames', `--skip=${read}`, `--max-count=${max}`, '--format=%x01%H%x1f%cI%x1f%s',
        commit, '--', ...(dir === '' ? [] : [`${dir}/`])],
      { gitDir, maxBytes: MAX_WALK_BYTES, timeoutMs: WALK_TIMEOUT_MS, truncate: true },
    );
    const records = parseWalk(stdout, truncated === true);
    for (const { commit: c, paths } of records) {
      for (const p of paths) {
        if (!p.startsWith(prefix)) continue;
        const rest = p.slice(prefix.length);
        const slash = rest.indexOf('/');
        const entry = prefix + (slash < 0 ? rest : rest.slice(0, slash));
        if (wanted.has(entry)) {
          wanted.delete(entry);
          found.set(entry, c);
          remember(keyOf(gitDir, commit, entry), c);
        }
      }
    }
    read += records.length;
    complete = !truncated && records.length < max;
    if (wanted.size === 0 || complete || truncated) break;
  }
  // A walk that read the whole history without meeting an entry will not meet it next time either.
  if (complete) for (const e of wanted) remember(keyOf(gitDir, commit, e), null);
  return found;
}
