/**
 * Custom attributes of projects and groups (the Service's ProjectCustomAttribute and
 * GroupCustomAttribute; users' own are user_custom_attributes in the users area): key/value
 * pairs administrators keep on a project or group.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type AttributeHolder = { kind: 'project'; id: number } | { kind: 'group'; id: number };

/** The holder's attributes in creation order, for paginate(). */
export function holderAttributesQuery(db: Kysely<DB>, holder: AttributeHolder) {
  return holder.kind === 'project'
    ? db.selectFrom('project_custom_attributes').select(['key', 'value']).where('project_id', '=', holder.id).orderBy('id')
    : db.selectFrom('group_custom_attributes').select(['key', 'value']).where('group_id', '=', holder.id).orderBy('id');
}

export function findHolderAttribute(db: Db, holder: AttributeHolder, key: string): Promise<{ key: string; value: string } | undefined> {
  return holder.kind === 'project'
    ? db.selectFrom('project_custom_attributes').select(['key', 'value'])
      .where('project_id', '=', holder.id).where('key', '=', key).executeTakeFirst()
    : db.selectFrom('group_custom_attributes').select(['key', 'value'])
      .where('group_id', '=', holder.id).where('key', '=', key).executeTakeFirst();
}

/** Sets `key` to `value` in one statement (the unique index on holder and key decides). */
export function upsertHolderAttribute(
  db: Db, holder: AttributeHolder, key: string, value: string,
): Promise<{ key: string; value: string }> {
  const now = nowIso();
  if (holder.kind === 'project') {
    return db.insertInto('project_custom_attributes').values({ project_id: holder.id, key, value, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['project_id', 'key']).doUpdateSet({ value, updated_at: now }))
      .returning(['key', 'value']).executeTakeFirstOrThrow();
  }
  return db.insertInto('group_custom_attributes').values({ group_id: holder.id, key, value, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['group_id', 'key']).doUpdateSet({ value, updated_at: now }))
    .returning(['key', 'value']).executeTakeFirstOrThrow();
}

/** Whether an attribute was there to delete. */
export async function deleteHolderAttribute(db: Db, holder: AttributeHolder, key: string): Promise<boolean> {
  const result = holder.kind === 'project'
    ? await db.deleteFrom('project_custom_attributes').where('project_id', '=', holder.id).where('key', '=', key).executeTakeFirst()
    : await db.deleteFrom('group_custom_attributes').where('group_id', '=', holder.id).where('key', '=', key).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
