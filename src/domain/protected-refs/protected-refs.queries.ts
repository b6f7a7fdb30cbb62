/** Protected branches and tags and their access levels (the only Kysely calls of the area). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type {
  ProtectedBranchAccessLevelRow, ProtectedBranchRow, ProtectedTagCreateAccessLevelRow, ProtectedTagRow,
} from '../../db/tables/protected-refs.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A project's protected branches, by name; `search` keeps names containing it (ProtectedBranchesFinder). */
export function protectedBranchesQuery(db: Db, projectId: number, search?: string) {
  let q = db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId);
  if (search) {
    const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
    q = q.where(sql`lower(name)`, 'like', sql<string>`${pattern} escape '\\'`);
  }
  return q.orderBy('id');
}

export async function findProtectedBranch(db: Db, projectId: number, name: string): Promise<ProtectedBranchRow | undefined> {
  return db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export async function branchAccessLevels(db: Db, branchIds: number[]): Promise<ProtectedBranchAccessLevelRow[]> {
  if (branchIds.length === 0) return [];
  return db.selectFrom('protected_branch_access_levels').selectAll().where('protected_branch_id', 'in', branchIds).orderBy('id').execute();
}

export async function allProtectedBranches(db: Db, projectId: number): Promise<ProtectedBranchRow[]> {
  return db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId).execute();
}

export async function insertProtectedBranch(trx: Db, o: {
  projectId: number; name: string; allowForcePush: boolean; push: number; merge: number; now: string;
}): Promise<ProtectedBranchRow> {
  const row = await trx.insertInto('protected_branches').values({
    project_id: o.projectId, name: o.name, allow_force_push: o.allowForcePush ? 1 : 0, created_at: o.now, updated_at: o.now,
  }).returningAll().executeTakeFirstOrThrow();
  await trx.insertInto('protected_branch_access_levels').values([
    { protected_branch_id: row.id, action: 'push', access_level: o.push, created_at: o.now, updated_at: o.now },
    { protected_branch_id: row.id, action: 'merge', access_level: o.merge, created_at: o.now, updated_at: o.now },
  ]).execute();
  return row;
}

export async function updateProtectedBranchForcePush(db: Db, id: number, allow: boolean, now: string): Promise<void> {
  await db.updateTable('protected_branches').set({ allow_force_push: allow ? 1 : 0, updated_at: now }).where('id', '=', id).execute();
}

export async function deleteProtectedBranch(db: Db, id: number): Promise<void> {
  await db.deleteFrom('protected_branches').where('id', '=', id).execute();
}

export function protectedTagsQuery(db: Db, projectId: number) {
  return db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId).orderBy('id');
}

export async function findProtectedTag(db: Db, projectId: number, name: string): Promise<ProtectedTagRow | undefined> {
  return db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export async function allProtectedTags(db: Db, projectId: number): Promise<ProtectedTagRow[]> {
  return db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId).execute();
}

export async function tagCreateAccessLevels(db: Db, tagIds: number[]): Promise<ProtectedTagCreateAccessLevelRow[]> {
  if (tagIds.length === 0) return [];
  return db.selectFrom('protected_tag_create_access_levels').selectAll().where('protected_tag_id', 'in', tagIds).orderBy('id').execute();
}

export async function insertProtectedTag(
  trx: Db, o: { projectId: number; name: string; create: number; now: string },
): Promise<ProtectedTagRow> {
  const row = await trx.insertInto('protected_tags').values({
    project_id: o.projectId, name: o.name, created_at: o.now, updated_at: o.now,
  }).returningAll().executeTakeFirstOrThrow();
  await trx.insertInto('protected_tag_create_access_levels').values({
    protected_tag_id: row.id, access_level: o.create, created_at: o.now, updated_at: o.now,
  }).execute();
  return row;
}

export async function deleteProtectedTag(db: Db, id: number): Promise<void> {
  await db.deleteFrom('protected_tags').where('id', '=', id).execute();
}
