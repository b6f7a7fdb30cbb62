/**
 * Labels given to an issue by title (Labels::FindOrCreateService as IssuableBaseService#filter_labels
 * calls it): a project may use its own labels and those of the groups above it; a title none of
 * them has becomes a new project label in the Service's default colour. Two requests creating the
 * same title meet at the (project_id, title) unique index: the loser's insert does nothing and
 * both read the one row back.
 *
 * Scoped labels (`scope::value`): an issue keeps at most one label per scope, the one applied
 * last (src/domain/labels/scoped.ts onePerScope). In the Service that is an EE rule behind the
 * licensed `scoped_labels` feature; issue 29 asks it of kiln, and clients that use scoped labels
 * expect it.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { availableLabelsByTitle, insertProjectLabels, type LabelOwners } from './issue-writes.queries.ts';

/** Label::DEFAULT_COLOR of the Service 15.2. */
export const DEFAULT_LABEL_COLOR = '#6699cc';

/** Titles as the Service reads a `labels` value: split at commas, trimmed, blanks and repeats dropped. */
export function labelTitles(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    for (const t of v.split(',')) {
      const title = t.trim();
      if (title !== '' && !out.includes(title)) out.push(title);
    }
  }
  return out;
}

/**
 * The labels with these titles the project may use, creating project labels for the missing
 * ones. A project label wins over a group label of the same title (the nearest owner, as
 * LabelsFinder orders them). The result follows the order of `titles`.
 */
export async function findOrCreateLabels(
  trx: Transaction<DB>, owners: LabelOwners, titles: readonly string[], now: string,
): Promise<LabelRow[]> {
  if (titles.length === 0) return [];
  let found = await availableLabelsByTitle(trx, owners, titles);
  const missing = titles.filter((t) => !found.some((l) => l.title === t));
  if (missing.length > 0) {
    await insertProjectLabels(trx, owners.projectId, missing, DEFAULT_LABEL_COLOR, now);
    found = await availableLabelsByTitle(trx, owners, titles);
  }
  return titles.flatMap((t) => {
    const own = found.find((l) => l.title === t && l.project_id === owners.projectId);
    const any = own ?? found.find((l) => l.title === t);
    return any ? [any] : [];
  });
}
