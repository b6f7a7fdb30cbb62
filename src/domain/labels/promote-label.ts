/**
 * Promoting a project label to a label of the project's group (Labels::PromoteService, 15.2): the
 * group gets a label of that title (taking the project label's colour and description when it has
 * none yet), and every label of the same title in the group's projects is merged into it — their
 * issues, board lists, subscriptions, priorities and label events move over and the project labels
 * go — all in one transaction.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { findOrCreateGroupLabel, moveLabelReferences, sameTitledProjectLabelIds } from './label-moves.queries.ts';

export async function promoteLabel(db: Kysely<DB>, label: LabelRow, groupId: number, groupProjectIds: number[]): Promise<LabelRow> {
  return db.transaction().execute(async (trx) => {
    const groupLabel = await findOrCreateGroupLabel(trx, groupId, label);
    const ids = new Set(await sameTitledProjectLabelIds(trx, groupProjectIds, label.title));
    ids.add(label.id);
    ids.delete(groupLabel.id);
    await moveLabelReferences(trx, [...ids], groupLabel.id);
    return groupLabel;
  });
}
