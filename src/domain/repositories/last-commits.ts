/**
 * The last commit of each entry of a directory (the tree page's "last commit" column, the
 * Service's logs_tree / ListLastCommitsForTree), for a page of entries at once with one `git log`
 * walk of the directory instead of one process per entry. A walk lists the paths each commit changed,
 * newest first, and the first commit that names a path below an entry is that entry's last
 * commit; it is read as it comes and ended as soon as every entry has one, so a directory whose
 * entries all changed recently costs a few commits of history, whatever its size.
 *
 * The walk is bounded in commits, bytes and time; entries it did not reach stay without a commit
 * (the page shows none rather than waiting on a history of millions of commits). Narrowing a
 * second walk to the missing entries' names costs more, not less: git matches every entry of
 * the directory against every pathspec in each commit (a flat directory of 5,000 files: ten
 * names took longer than the whole directory), and commit-graph Bloom filters, which make one
 * path's walk cheap, help one pathspec only. The Service computes this per batch of 25 entries
 * (logs_tree's offset), a walk per entry.
 *
 * Merge commits list no paths (`git log` shows no diff for a merge without `-m`), so an entry
 * last changed by a merge's own resolution is attributed to the commit before it; a simplified
 * history (`-- <path>`) already skips merges that took one side unchanged, as `git log -- <path>`
 * does for the Service. Pathspecs are literal (GIT_LITERAL_PATHSPECS): a name with `*` or `:(`
 * is a name.
 *
 * Results are kept per (commit, entry path) in the repositories' bounded cache
 * (repository-cache.ts): a commit id names immutable history, so an answer never goes stale.
 */
import { scanGitRecords } from './git-bytes.ts';
import { COMMIT_ID } from './ref-names.ts';
import { cacheKey, repositoryCache } from './repository-cache.ts';

export interface LastCommit {
  id: string;
  title: string;
  committedDate: string;
}

/** Most commits the walk reads (it ends sooner once every entry has its commit). */
export const MAX_WALK_COMMITS = 10_000;
/** Most bytes of `git log --name-only` one walk reads. */
const MAX_WALK_BYTES = 8 * 1024 * 1024;
/** Past this the walk answers with what it found. */
const WALK_TIMEOUT_MS = 3000;
function remember(key: string, value: LastCommit | null): void {
  repositoryCache.set(key, value, value ? (value.id.length + value.committedDate.length + value.title.length) * 2 : 8);
}

const keyOf = (gitDir: string, commit: string, path: string) => cacheKey('last-commit', gitDir, commit, path);

/**
 * One walk: the records of `git log -z --name-only` (`\x01<id>\x1f<committer date>\x1f<subject>`,
 * then the commit's changed paths, the first after a newline) as they arrive. Each path below an
 * entry not met before gives that entry this commit. `complete`: the history ended within the
 * bounds (an entry not met is not there to meet).
 */
async function walk(
  gitDir: string, commit: string, pathspecs: string[], prefix: string, wanted: Set<string>,
  found: (entry: string, c: LastCommit) => void, deadline: number,
): Promise<{ complete: boolean }> {
  let current: LastCommit | null = null;
  const met = new Set<string>();
  let commits = 0;
  const { stopped, truncated } = await scanGitRecords(
    ['log', '-z', '--name-only', '--no-renames', `--max-count=${MAX_WALK_COMMITS}`, '--format=%x01%H%x1f%cI%x1f%s', commit, '--', ...pathspecs],
    { gitDir, env: { GIT_LITERAL_PATHSPECS: '1' }, maxBytes: MAX_WALK_BYTES, timeoutMs: deadline - Date.now() },
    (record) => {
      let token = record.replace(/^\n+/, '');
      if (token.startsWith('\x01')) {
        const nl = token.indexOf('\n');
        const [id, date, ...subject] = (nl < 0 ? token.slice(1) : token.slice(1, nl)).split('\x1f');
        current = id && COMMIT_ID.test(id) && date
          ? { id, committedDate: new Date(date).toISOString(), title: subject.join('\x1f') } : null;
        commits += 1;
        token = nl < 0 ? '' : token.slice(nl).replace(/^\n+/, '');
      }
      if (token === '' || current === null || !token.startsWith(prefix)) return true;
      const rest = token.slice(prefix.length);
      const slash = rest.indexOf('/');
      const entry = prefix + (slash < 0 ? rest : rest.slice(0, slash));
      // Every entry met is answered, wanted or not: the next page of the directory's entries
      // finds those the walk for this one passed on its way (remembered by found).
      if (!met.has(entry)) {
        met.add(entry);
        wanted.delete(entry);
        found(entry, current);
      }
      return wanted.size > 0;
    },
  );
  return { complete: !stopped && !truncated && commits < MAX_WALK_COMMITS };
}

/**
 * The last commit of each of `entries` (paths from the repository root, all directly inside
 * `dir`, '' for the root) as of `commit`, a resolved commit id. Entries absent from the answer
 * were not reached within the walks' bounds.
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
  const asked = new Set(wanted);
  const record = (entry: string, c: LastCommit) => {
    if (asked.has(entry)) found.set(entry, c);
    remember(keyOf(gitDir, commit, entry), c);
  };
  const { complete } = await walk(gitDir, commit, dir === '' ? [] : [prefix], prefix, wanted, record, Date.now() + WALK_TIMEOUT_MS);
  // A walk that read the whole history without meeting an entry will not meet it next time either.
  if (complete) for (const e of wanted) remember(keyOf(gitDir, commit, e), null);
  return found;
}
