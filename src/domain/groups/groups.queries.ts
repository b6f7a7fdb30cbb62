/** Every Kysely call about group rows (namespaces of kind 'group'). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';
import { containsPattern } from '../projects/project.finder.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function insertGroup(db: Db, g: {
  name: string; path: string; parentId: number | null; description: string; visibilityLevel: number; storage: string; wikiDiskPath: string; createdById: number;
}): Promise<NamespaceRow> {
  const now = nowIso();
  return db.insertInto('namespaces').values({
    name: g.name, path: g.path, kind: 'group', owner_id: null, parent_id: g.parentId, description: g.description,
    visibility_level: g.visibilityLevel, repository_storage: g.storage, wiki_disk_path: g.wikiDiskPath,
    created_by_id: g.createdById, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export interface GroupFilters {
  /** Groups the user reaches by membership (with inherited sub-groups), or null for all. */
  memberOf: number[] | null;
  /** Also every group visible by visibility (public; internal for users who are not external). */
  includeVisible: { minVisibility: number } | null;
  search?: string;
  topLevelOnly?: boolean;
  skipGroups?: number[];
  ownedIds?: number[];
}

/**
 * GET /groups (GroupsFinder): the groups a viewer may list, filtered. `memberOf` and
 * `includeVisible` together mean "visible or member"; `memberOf` alone means membership only.
 */
export function groupsQuery(db: Db, f: GroupFilters) {
  let qb = db.selectFrom('namespaces').selectAll().where('kind', '=', 'group');
  if (f.memberOf !== null || f.includeVisible !== null) {
    const member = f.memberOf ?? [];
    const visible = f.includeVisible;
    qb = qb.where((eb) => eb.or([
      ...(member.length ? [eb('id', 'in', member)] : []),
      ...(visible ? [eb('visibility_level', '>=', visible.minVisibility)] : []),
      ...(!member.length && !visible ? [eb(sql.lit(1), '=', 0)] : []),
    ]));
  }
  if (f.ownedIds) qb = f.ownedIds.length ? qb.where('id', 'in', f.ownedIds) : qb.where(sql.lit(1), '=', 0);
  if (f.search) {
    const pattern = containsPattern(f.search);
    qb = qb.where((eb) => eb.or([
      eb(sql`lower(name)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(path)`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  if (f.topLevelOnly) qb = qb.where('parent_id', 'is', null);
  if (f.skipGroups?.length) qb = qb.where('id', 'not in', f.skipGroups);
  return qb;
}

/** Whether the user may create top-level groups (users.can_create_group; administrators always). */
export function canCreateTopLevelGroup(user: UserRow): boolean {
  return user.admin === 1 || user.can_create_group === 1;
}

export const PUBLIC_ONLY = { minVisibility: VISIBILITY_LEVELS.public };
