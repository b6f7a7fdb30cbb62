/** Every Kysely call of the badges area. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { BadgeRow, BadgeType } from '../../db/tables/badges.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Whose badges: a group's own, or a project's with those of its group and the group's ancestors (Project#badges). */
export interface BadgeHolder {
  projectId?: number;
  groupIds: number[];
}

/** The holder's badges in created_at order (Badge's default scope), a name's only when given (with_name). */
export function badgesQuery(db: Db, holder: BadgeHolder, name?: string) {
  let q = db.selectFrom('badges').selectAll().where((eb) => {
    const parts = [];
    if (holder.projectId !== undefined) parts.push(eb('project_id', '=', holder.projectId));
    if (holder.groupIds.length > 0) parts.push(eb('group_id', 'in', holder.groupIds));
    return eb.or(parts);
  });
  if (name !== undefined) q = q.where('name', '=', name);
  return q.orderBy('created_at').orderBy('id');
}

export function findHeldBadge(db: Db, holder: BadgeHolder, id: number): Promise<BadgeRow | undefined> {
  return badgesQuery(db, holder).where('id', '=', id).executeTakeFirst();
}

export interface NewBadge {
  link_url: string;
  image_url: string;
  name: string | null;
  type: BadgeType;
  project_id: number | null;
  group_id: number | null;
  created_at: string;
  updated_at: string;
}

export function insertBadge(db: Db, b: NewBadge): Promise<BadgeRow> {
  return db.insertInto('badges').values(b).returningAll().executeTakeFirstOrThrow();
}

export function updateBadge(
  db: Db, id: number, values: { link_url?: string; image_url?: string; name?: string | null; updated_at: string },
): Promise<BadgeRow | undefined> {
  return db.updateTable('badges').set(values).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteBadge(db: Db, id: number): Promise<void> {
  await db.deleteFrom('badges').where('id', '=', id).execute();
}
