/**
 * Every Kysely call about sharing with groups (the Service's ProjectGroupLink and GroupGroupLink):
 * a project or group shared with another group at `group_access` until `expires_at` (a date; the
 * link gives nothing from that day on, as the Service's `expires_at > now`). What a link gives a
 * member of the shared-with group is the lower of their level there and the link's level.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { GroupGroupLinkRow, ProjectGroupLinkRow } from '../../db/tables/group-links.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Today in UTC (`YYYY-MM-DD`): a link expiring today has expired. */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** A link to `groupId` giving `access` (the link's level). */
export interface ActiveLink {
  groupId: number;
  access: number;
}

/** The active links of a project to groups (project_group_links_pair). */
export async function activeProjectLinks(db: Db, projectId: number): Promise<ActiveLink[]> {
  const rows = await db.selectFrom('project_group_links').select(['group_id', 'group_access'])
    .where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
  return rows.map((r) => ({ groupId: r.group_id, access: r.group_access }));
}

/** The active links of the groups `sharedIds` to the groups they are shared with (group_group_links_pair). */
export async function activeGroupLinks(db: Db, sharedIds: number[]): Promise<ActiveLink[]> {
  if (sharedIds.length === 0) return [];
  const rows = await db.selectFrom('group_group_links').select(['shared_with_group_id', 'group_access'])
    .where('shared_group_id', 'in', sharedIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
  return rows.map((r) => ({ groupId: r.shared_with_group_id, access: r.group_access }));
}

/** The active links of the projects `projectIds` (project_group_links_pair). */
export function projectLinksOfProjects(
  db: Db, projectIds: number[],
): Promise<Pick<ProjectGroupLinkRow, 'project_id' | 'group_id' | 'group_access'>[]> {
  return db.selectFrom('project_group_links').select(['project_id', 'group_id', 'group_access'])
    .where('project_id', 'in', projectIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
}

/** The active links of the groups `groupIds` to the groups they are shared with (group_group_links_pair). */
export function groupLinksOfGroups(
  db: Db, groupIds: number[],
): Promise<Pick<GroupGroupLinkRow, 'shared_group_id' | 'shared_with_group_id' | 'group_access'>[]> {
  if (groupIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('group_group_links').select(['shared_group_id', 'shared_with_group_id', 'group_access'])
    .where('shared_group_id', 'in', groupIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
}

/** Projects shared with any of `groupIds`, with each link (project_group_links_group). */
export function projectLinksToGroups(
  db: Db, groupIds: number[],
): Promise<Pick<ProjectGroupLinkRow, 'project_id' | 'group_id' | 'group_access'>[]> {
  if (groupIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('project_group_links').select(['project_id', 'group_id', 'group_access'])
    .where('group_id', 'in', groupIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
}

/** Groups shared with any of `groupIds`, with each link (group_group_links_with). */
export function groupLinksToGroups(
  db: Db, groupIds: number[],
): Promise<Pick<GroupGroupLinkRow, 'shared_group_id' | 'shared_with_group_id' | 'group_access'>[]> {
  if (groupIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('group_group_links').select(['shared_group_id', 'shared_with_group_id', 'group_access'])
    .where('shared_with_group_id', 'in', groupIds)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())])).execute();
}

/** A project's links with the linked group's name and full path parts, for `shared_with_groups`. */
export function projectLinksOf(db: Db, projectIds: number[]) {
  return db.selectFrom('project_group_links').innerJoin('namespaces', 'namespaces.id', 'project_group_links.group_id')
    .selectAll('project_group_links').select(['namespaces.name as group_name'])
    .where('project_group_links.project_id', 'in', projectIds).orderBy('project_group_links.id').execute();
}

/** A group's links to the groups it is shared with, for `shared_with_groups`. */
export function groupLinksOf(db: Db, groupId: number) {
  return db.selectFrom('group_group_links').innerJoin('namespaces', 'namespaces.id', 'group_group_links.shared_with_group_id')
    .selectAll('group_group_links').select(['namespaces.name as group_name'])
    .where('group_group_links.shared_group_id', '=', groupId).orderBy('group_group_links.id').execute();
}

export function insertProjectLink(db: Db, v: { projectId: number; groupId: number; access: number; expiresAt: string | null }) {
  const now = nowIso();
  return db.insertInto('project_group_links').values({
    project_id: v.projectId, group_id: v.groupId, group_access: v.access, expires_at: v.expiresAt, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteProjectLink(db: Db, projectId: number, groupId: number): Promise<boolean> {
  const r = await db.deleteFrom('project_group_links').where('project_id', '=', projectId).where('group_id', '=', groupId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export function insertGroupLink(db: Db, v: { sharedGroupId: number; sharedWithGroupId: number; access: number; expiresAt: string | null }) {
  const now = nowIso();
  return db.insertInto('group_group_links').values({
    shared_group_id: v.sharedGroupId, shared_with_group_id: v.sharedWithGroupId, group_access: v.access, expires_at: v.expiresAt,
    created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function deleteGroupLink(db: Db, sharedGroupId: number, sharedWithGroupId: number): Promise<boolean> {
  const r = await db.deleteFrom('group_group_links').where('shared_group_id', '=', sharedGroupId)
    .where('shared_with_group_id', '=', sharedWithGroupId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The projects shared with a group (GroupDetail's shared_projects), by id. */
export function projectIdsSharedWith(db: Db, groupId: number) {
  return db.selectFrom('project_group_links').select('project_id').where('group_id', '=', groupId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())]));
}

