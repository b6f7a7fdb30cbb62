/** Every Kysely call about group rows (namespaces of kind 'group'). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { VISIBILITY_LEVELS } from '../permissions/access.ts';
import { containsPattern } from '../projects/project.finder.ts';
import { descendantGroupIds } from '../namespaces/namespaces.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function insertGroup(db: Db, g: {
  name: string; path: string; parentId: number | null; description: string; visibilityLevel: number; storage: string;
  wikiDiskPath: string; createdById: number;
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
  /** Children of these groups only (GET /groups/:id/subgroups, /descendant_groups). */
  parentIds?: number[];
  /** Every `custom_attributes[key]=value` pair must match (administrators' filter). */
  customAttributes?: Record<string, string>;
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
  if (f.parentIds) qb = f.parentIds.length ? qb.where('parent_id', 'in', f.parentIds) : qb.where(sql.lit(1), '=', 0);
  if (f.skipGroups?.length) qb = qb.where('id', 'not in', f.skipGroups);
  // Each pair found from its key and value (group_custom_attributes_key_value).
  for (const [key, value] of Object.entries(f.customAttributes ?? {})) {
    // Stored keys are at most 255 characters: a longer one matches nothing and is not sent.
    if (key.length > 255) return qb.where(sql.lit(1), '=', 0);
    qb = qb.where('id', 'in', (eb) => eb.selectFrom('group_custom_attributes').select('group_custom_attributes.group_id')
      .where('group_custom_attributes.key', '=', key).where('group_custom_attributes.value', '=', value));
  }
  return qb;
}

/**
 * The offset order of GET /groups; names compare case-insensitively (the namespaces_kind_name
 * index, lower(name) then id), the same on both engines; id breaks ties.
 */
export function orderGroups(qb: ReturnType<typeof groupsQuery>, orderBy: 'name' | 'path' | 'id', sort: 'asc' | 'desc') {
  if (orderBy === 'id') return qb.orderBy('id', sort);
  const column = orderBy === 'name' ? sql<string>`lower(name)` : sql.ref<string>('path');
  return qb.orderBy(column, sort).orderBy('id', sort);
}

/** Whether the user may create top-level groups (users.can_create_group; administrators always). */
export function canCreateTopLevelGroup(user: UserRow): boolean {
  return user.admin === 1 || user.can_create_group === 1;
}

export const PUBLIC_ONLY = { minVisibility: VISIBILITY_LEVELS.public };

/**
 * The groups `rootIds` with every sub-group below them, and the projects they hold: what a
 * group's removal takes with it.
 */
export async function groupTrees(db: Db, rootIds: number[]): Promise<{
  groups: NamespaceRow[]; projects: { id: number; repository_storage: string; disk_path: string }[];
}> {
  if (rootIds.length === 0) return { groups: [], projects: [] };
  const below = await descendantGroupIds(db, rootIds);
  const ids = [...new Set([...rootIds, ...below.keys()])];
  const [groups, projects] = await Promise.all([
    db.selectFrom('namespaces').selectAll().where('kind', '=', 'group').where('id', 'in', ids).execute(),
    db.selectFrom('projects').select(['id', 'repository_storage', 'disk_path']).where('namespace_id', 'in', ids).execute(),
  ]);
  return { groups, projects };
}

/**
 * Removes groups and their projects with the membership rows of both (members carry no foreign
 * key). Run inside the caller's transaction; sub-groups must be listed too (groupTrees).
 */
export async function deleteGroupsWithProjects(trx: Transaction<DB>, groupIds: number[], projectIds: number[]): Promise<void> {
  if (groupIds.length === 0) return;
  if (projectIds.length > 0) {
    await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', 'in', projectIds).execute();
    await trx.deleteFrom('projects').where('id', 'in', projectIds).execute();
  }
  await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', groupIds).execute();
  await trx.deleteFrom('namespaces').where('id', 'in', groupIds).execute();
}

export async function updateGroupRow(
  db: Db, id: number, set: { name?: string; path?: string; description?: string; visibility_level?: number },
): Promise<NamespaceRow | undefined> {
  return db.updateTable('namespaces').set({ ...set, updated_at: nowIso() })
    .where('id', '=', id).where('kind', '=', 'group').returningAll().executeTakeFirst();
}

/**
 * The highest visibility among a group's direct sub-groups and direct projects (0 when it has
 * none): what a group's own visibility may not fall below. Served by namespaces_parent and
 * projects_namespace_path.
 */
export async function highestChildVisibility(db: Db, groupId: number): Promise<{ groups: number; projects: number }> {
  const [g, p] = await Promise.all([
    db.selectFrom('namespaces').select((eb) => eb.fn.max<number>('visibility_level').as('v')).where(
      'parent_id', '=', groupId,
    ).executeTakeFirst(),
    db.selectFrom('projects').select((eb) => eb.fn.max<number>('visibility_level').as('v')).where(
      'namespace_id', '=', groupId,
    ).executeTakeFirst(),
  ]);
  return { groups: Number(g?.v ?? 0), projects: Number(p?.v ?? 0) };
}

/** Whether a project of `parentId` has `path` (a sub-group moving there would share its URL). */
export async function projectPathTakenIn(db: Db, parentId: number, path: string): Promise<boolean> {
  const row = await db.selectFrom('projects').select('id').where('namespace_id', '=', parentId)
    .where(sql`lower(path)`, '=', path.toLowerCase()).executeTakeFirst();
  return row !== undefined;
}

/** The projects of the groups `ids`, with what their full paths are made of. */
export function projectPlaces(db: Db, ids: number[]): Promise<{ id: number; path: string; namespace_id: number }[]> {
  return db.selectFrom('projects').select(['id', 'path', 'namespace_id']).where('namespace_id', 'in', ids).execute();
}

export function groupRows(db: Db, ids: number[]): Promise<NamespaceRow[]> {
  return db.selectFrom('namespaces').selectAll().where('id', 'in', ids).execute();
}

/** A group's new parent (null: the top level) and visibility. */
export function moveGroupRow(db: Db, id: number, parentId: number | null, visibilityLevel: number): Promise<NamespaceRow> {
  return db.updateTable('namespaces').set({ parent_id: parentId, visibility_level: visibilityLevel, updated_at: nowIso() })
    .where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Lowers the groups `ids` and their projects to `level` where they were above it. */
export async function capTreeVisibility(db: Db, ids: number[], level: number): Promise<void> {
  await db.updateTable('namespaces').set({ visibility_level: level }).where('id', 'in', ids).where('visibility_level', '>', level)
    .execute();
  await db.updateTable('projects').set({ visibility_level: level }).where('namespace_id', 'in', ids).where('visibility_level', '>', level)
    .execute();
}
