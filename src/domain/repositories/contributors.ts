/**
 * A repository's contributors (the Service 15.2's Repository#contributors): the last 2000 commits
 * of the default branch without merges, grouped by author email (in the order the emails first
 * appear, newest first), named by the newest non-blank author name, counted; then ordered by
 * `name`, `email` or `commits` (Commit.order_by; ties keep that first-appearance order).
 * Additions and deletions are no longer counted by the Service: its entity answers 0.
 */
import { logRange } from './git-read.ts';

const CONTRIBUTOR_COMMITS = 2000;

export interface Contributor {
  name: string;
  email: string;
  commits: number;
}

export async function contributors(
  gitDir: string, head: string, orderBy: 'name' | 'email' | 'commits', sort: 'asc' | 'desc',
): Promise<Contributor[]> {
  const byEmail = new Map<string, Contributor>();
  for (const c of await logRange(gitDir, null, head, CONTRIBUTOR_COMMITS, { noMerges: true })) {
    let entry = byEmail.get(c.authorEmail);
    if (!entry) byEmail.set(c.authorEmail, entry = { name: '', email: c.authorEmail, commits: 0 });
    if (entry.name.trim() === '') entry.name = c.authorName;
    entry.commits += 1;
  }
  const sign = sort === 'desc' ? -1 : 1;
  // Ruby's <=> on strings compares bytes; on numbers, values.
  const cmp = (a: Contributor, b: Contributor): number => {
    if (orderBy === 'commits') return a.commits - b.commits;
    const x = Buffer.from(a[orderBy]);
    const y = Buffer.from(b[orderBy]);
    return Buffer.compare(x, y);
  };
  return [...byEmail.values()].sort((a, b) => sign * cmp(a, b));
}
