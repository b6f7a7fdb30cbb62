/**
 * Moving everything that points at some labels onto another (Labels::PromoteService's
 * update_old_label_relations): label links, board lists, subscriptions, priorities and label
 * events. Where the target label is already in place (an issue carrying both, a board listing
 * both) the old row is dropped first, since each of those is unique per label.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { nowIso } from '../clock.ts';

type Trx = Transaction<DB>;

/** The group label of this title, created from `from` when the group has none (find_or_create_group_label). */
export async function findOrCreateGroupLabel(trx: Trx, groupId: number, from: LabelRow, now = nowIso()): Promise<LabelRow> {
  await trx.insertInto('labels').values({
    project_id: null, group_id: groupId, title: from.title, color: from.color, description: from.description,
    created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['group_id', 'title']).where('group_id', 'is not', null).doNothing()).execute();
  return trx.selectFrom('labels').selectAll().where('group_id', '=', groupId).where('title', '=', from.title).executeTakeFirstOrThrow();
}

/** Ids of the labels titled `title` in these projects (the same-titled labels a promotion merges). */
export async function sameTitledProjectLabelIds(trx: Trx, projectIds: number[], title: string): Promise<number[]> {
  if (projectIds.length === 0) return [];
  const rows = await trx.selectFrom('labels').select('id').where('project_id', 'in', projectIds).where('title', '=', title).execute();
  return rows.map((r) => r.id);
}

export async function moveLabelReferences(trx: Trx, fromIds: number[], toId: number): Promise<void> {
  if (fromIds.length === 0) return;
  await trx.deleteFrom('label_links').where('label_id', 'in', fromIds)
    .where((eb) => eb.exists(eb.selectFrom('label_links as kept').select('kept.id').where('kept.label_id', '=', toId)
      .whereRef('kept.target_type', '=', 'label_links.target_type').whereRef('kept.target_id', '=', 'label_links.target_id')))
    .execute();
  await trx.updateTable('label_links').set({ label_id: toId }).where('label_id', 'in', fromIds).execute();

  await trx.deleteFrom('board_lists').where('label_id', 'in', fromIds)
    .where((eb) => eb.exists(eb.selectFrom('board_lists as kept').select('kept.id').where('kept.label_id', '=', toId)
      .whereRef('kept.board_id', '=', 'board_lists.board_id')))
    .execute();
  await trx.updateTable('board_lists').set({ label_id: toId }).where('label_id', 'in', fromIds).execute();

  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', fromIds)
    .where((eb) => eb.exists(eb.selectFrom('subscriptions as kept').select('kept.id')
      .where('kept.subscribable_type', '=', 'Label').where('kept.subscribable_id', '=', toId)
      .whereRef('kept.user_id', '=', 'subscriptions.user_id')))
    .execute();
  // Two old labels may share a subscriber (labels of two projects): keep the first.
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', fromIds)
    .where('id', 'not in', trx.selectFrom('subscriptions').select((eb) => eb.fn.min('id').as('id'))
      .where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', fromIds).groupBy('user_id'))
    .execute();
  await trx.updateTable('subscriptions').set({ subscribable_id: toId })
    .where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', fromIds).execute();

  await trx.deleteFrom('label_priorities').where('label_id', 'in', fromIds)
    .where((eb) => eb.exists(eb.selectFrom('label_priorities as kept').select('kept.id').where('kept.label_id', '=', toId)
      .whereRef('kept.project_id', '=', 'label_priorities.project_id')))
    .execute();
  await trx.updateTable('label_priorities').set({ label_id: toId }).where('label_id', 'in', fromIds).execute();

  await trx.updateTable('resource_label_events').set({ label_id: toId }).where('label_id', 'in', fromIds).execute();
  await trx.deleteFrom('labels').where('id', 'in', fromIds).execute();
}
