/**
 * Pushes to a project wiki's repository (the Service's Git::WikiPushService, 15.2): each page
 * file changed by a push to the wiki's default branch (at most MAX_CHANGES of them) becomes an
 * activity event of the project with the pusher as author — created for an added file, destroyed
 * for a deleted one, updated otherwise — pointing at the page's metadata (WikiPage::Meta,
 * found by the page's last known slug or created, its title kept current: WikiPage::Meta.
 * find_or_create through WikiPages::EventCreateService). Files that are no page are skipped.
 * In 15.2 a wiki push runs no wiki_page webhooks and no integrations: WikiPushService records
 * these events only (hooks and chat messages come from edits through the API, wiki-page-hooks.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { recordEvent } from '../events/events.queries.ts';
import { runGit } from '../repositories/git-command.ts';
import { wikiBranch } from './wiki-repository.ts';
import { pageOf } from './wiki-pages.ts';
import { insertMeta, makeCanonicalSlug, metaBySlug, retitleMeta } from './wikis.queries.ts';

/** Git::WikiPushService::MAX_CHANGES. */
export const MAX_WIKI_PUSH_CHANGES = 100;
const ZERO = /^0+$/;

export interface WikiRefUpdate { ref: string; before: string; after: string }

interface PageChange { action: 'created' | 'updated' | 'destroyed'; lastKnownSlug: string; slug: string; title: string }

/** The raw changes between two commits (Gitlab::Git::Repository#raw_changes_between), renames followed. */
async function rawChanges(gitDir: string, before: string, after: string): Promise<PageChange[]> {
  const args = ZERO.test(before)
    ? ['diff-tree', '-r', '--no-commit-id', '--name-status', '-z', '--root', after]
    : ['diff', '--name-status', '-z', '-M', before, after, '--'];
  const { stdout, exitCode } = await runGit(args, { gitDir, okExitCodes: [128] });
  if (exitCode !== 0) return [];
  const parts = stdout.split('\0').filter((p) => p !== '');
  const out: PageChange[] = [];
  for (let i = 0; i < parts.length;) {
    const status = parts[i++];
    const oldPath = parts[i++];
    const newPath = status.startsWith('R') || status.startsWith('C') ? parts[i++] : oldPath;
    // Git::WikiPushService::Change#page: the page at the new path (the old one for a deletion).
    const page = pageOf(status === 'D' ? oldPath : newPath, '');
    if (!page) continue;
    const last = pageOf(oldPath, '') ?? page;
    const action = status === 'A' ? 'created' : status === 'D' ? 'destroyed' : 'updated';
    out.push({ action, lastKnownSlug: last.slug, slug: page.slug, title: page.title });
  }
  return out;
}

/** Records the events of a wiki push; returns how many. */
export async function recordWikiPushEvents(
  db: Kysely<DB>, gitDir: string, projectId: number, updates: WikiRefUpdate[], authorId: number,
): Promise<number> {
  const branch = `refs/heads/${await wikiBranch(gitDir)}`;
  const changes: PageChange[] = [];
  for (const u of updates) {
    if (u.ref !== branch || ZERO.test(u.after)) continue;
    changes.push(...await rawChanges(gitDir, u.before, u.after));
  }
  const taken = changes.slice(0, MAX_WIKI_PUSH_CHANGES);
  if (taken.length === 0) return 0;
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    for (const change of taken) {
      let meta = await metaBySlug(trx, projectId, change.lastKnownSlug) ?? await metaBySlug(trx, projectId, change.slug);
      if (meta) await retitleMeta(trx, meta.id, change.title, now);
      else meta = await insertMeta(trx, projectId, change.title, now);
      await makeCanonicalSlug(trx, meta, change.slug, now);
      await recordEvent(trx, {
        project_id: projectId, author_id: authorId, action: change.action, target_type: 'WikiPage::Meta', target_id: meta.id,
      }, now);
    }
  });
  return taken.length;
}
