/** Every Kysely call of the deploy keys area (keys of type DeployKey and deploy_keys_projects). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { DeployKeysProjectRow, KeyRow } from '../../db/tables/keys.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A deploy key as enabled on one project: the key's row with the link's `can_push`. */
export type ProjectDeployKey = KeyRow & { can_push: number; link_id: number };

function projectKeys(db: Db, projectId: number) {
  return db.selectFrom('deploy_keys_projects as dkp').innerJoin('keys as k', 'k.id', 'dkp.deploy_key_id')
    .selectAll('k').select(['dkp.can_push', 'dkp.id as link_id']).where('dkp.project_id', '=', projectId);
}

/** The keys enabled on a project, in the order they were enabled (index deploy_keys_projects_project_key). */
export function projectDeployKeysQuery(db: Db, projectId: number) {
  return projectKeys(db, projectId).orderBy('dkp.id');
}

export async function findProjectDeployKey(db: Db, projectId: number, keyId: number): Promise<ProjectDeployKey | undefined> {
  if (!isStorableId(keyId)) return undefined;
  return projectKeys(db, projectId).where('dkp.deploy_key_id', '=', keyId).executeTakeFirst();
}

export function findProjectDeployKeyBySha256(db: Db, projectId: number, fingerprintSha256: string): Promise<ProjectDeployKey | undefined> {
  return projectKeys(db, projectId).where('k.fingerprint_sha256', '=', fingerprintSha256).executeTakeFirst();
}

export async function findDeployKeyById(db: Db, id: number): Promise<KeyRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('keys').selectAll().where('id', '=', id).where('type', '=', 'DeployKey').executeTakeFirst();
}

export function findDeployKeyBySha256(db: Db, fingerprintSha256: string): Promise<KeyRow | undefined> {
  return db.selectFrom('keys').selectAll().where('fingerprint_sha256', '=', fingerprintSha256).where('type', '=', 'DeployKey')
    .executeTakeFirst();
}

/** Every deploy key of the instance, or only the public ones, in id order (index keys_type_public). */
export function allDeployKeysQuery(db: Db, publicOnly: boolean) {
  let q = db.selectFrom('keys').selectAll().where('type', '=', 'DeployKey');
  if (publicOnly) q = q.where('public', '=', 1);
  return q.orderBy('id');
}

/** The links of these keys to projects (index deploy_keys_projects_key). */
export async function linksOfKeys(db: Db, keyIds: number[]): Promise<DeployKeysProjectRow[]> {
  if (keyIds.length === 0) return [];
  return db.selectFrom('deploy_keys_projects').selectAll().where('deploy_key_id', 'in', keyIds).orderBy('id').execute();
}

/** Project ids a key is enabled on, at most `limit` of them. */
export async function projectIdsOfKey(db: Db, keyId: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('deploy_keys_projects').select('project_id').where('deploy_key_id', '=', keyId)
    .orderBy('project_id').limit(limit).execute();
  return rows.map((r) => r.project_id);
}

export async function findDeployKeysProject(db: Db, keyId: number, projectId: number): Promise<DeployKeysProjectRow | undefined> {
  return db.selectFrom('deploy_keys_projects').selectAll().where('project_id', '=', projectId).where('deploy_key_id', '=', keyId)
    .executeTakeFirst();
}

export async function insertDeployKeysProject(db: Db, keyId: number, projectId: number, canPush: boolean): Promise<void> {
  const now = nowIso();
  await db.insertInto('deploy_keys_projects').values({
    deploy_key_id: keyId, project_id: projectId, can_push: canPush ? 1 : 0, created_at: now, updated_at: now,
  }).execute();
}

export async function updateDeployKeysProject(db: Db, linkId: number, canPush: boolean): Promise<void> {
  await db.updateTable('deploy_keys_projects').set({ can_push: canPush ? 1 : 0, updated_at: nowIso() }).where('id', '=', linkId).execute();
}

export async function updateDeployKeyTitle(db: Db, keyId: number, title: string): Promise<void> {
  await db.updateTable('keys').set({ title, updated_at: nowIso() }).where('id', '=', keyId).execute();
}

export async function deleteDeployKeysProject(db: Db, linkId: number): Promise<void> {
  await db.deleteFrom('deploy_keys_projects').where('id', '=', linkId).execute();
}

/** Deletes a private deploy key no project uses any more, in one statement (DeployKeysProject#destroy_orphaned_deploy_key). */
export async function deleteOrphanedPrivateDeployKey(db: Db, keyId: number): Promise<void> {
  await db.deleteFrom('keys').where('id', '=', keyId).where('type', '=', 'DeployKey').where('public', '=', 0)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('deploy_keys_projects').select('id').where('deploy_key_id', '=', keyId))))
    .execute();
}

/** Whether the user created any deploy key (index keys_user). */
export async function hasDeployKeys(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('keys').select('id').where('user_id', '=', userId).where('type', '=', 'DeployKey').limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Deploy keys a deleted user created stay with their projects, the ghost user's (DeployKey#user falls back to the ghost). */
export async function moveDeployKeysToUser(db: Db, fromUserId: number, toUserId: number): Promise<void> {
  await db.updateTable('keys').set({ user_id: toUserId }).where('user_id', '=', fromUserId).where('type', '=', 'DeployKey').execute();
}

/** The names of the keys' creators, for the publishable key's comment (Key#publishable_key). */
export async function creatorNames(db: Db, userIds: number[]): Promise<Map<number, string>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The projects a list of deploy keys may push to (projects_with_write_access). */
export async function projectsByIds(db: Db, ids: number[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('projects').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}

/**
 * Ids of the projects the user holds at least `min` in (Project.visible_to_user_and_access_level):
 * direct memberships, memberships of their groups (inherited down), and their personal namespace's
 * projects, which they own.
 */
export async function projectIdsAtLevel(
  db: Db, reach: { projects: Map<number, number>; groups: Map<number, number>; personalNamespaceId: number | null }, min: number,
): Promise<Set<number>> {
  const ids = new Set([...reach.projects].filter(([, level]) => level >= min).map(([id]) => id));
  const namespaces = [...reach.groups].filter(([, level]) => level >= min).map(([id]) => id);
  if (reach.personalNamespaceId !== null) namespaces.push(reach.personalNamespaceId);
  if (namespaces.length > 0) {
    const rows = await db.selectFrom('projects').select('id').where('namespace_id', 'in', namespaces).where('pending_delete', '=', 0)
      .execute();
    for (const r of rows) ids.add(r.id);
  }
  return ids;
}

/** DeployKey.in_projects: the deploy keys enabled on any of these projects, in id order. */
export function deployKeysInProjectsQuery(db: Db, projectIds: number[]) {
  const links = db.selectFrom('deploy_keys_projects').select('deploy_key_id')
    .where('project_id', 'in', projectIds.length ? projectIds : [0]);
  return db.selectFrom('keys').selectAll().where('type', '=', 'DeployKey').where('id', 'in', links).orderBy('id');
}
