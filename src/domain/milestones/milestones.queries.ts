/**
 * Every Kysely call about milestones: a project's or group's list with the Service's filters
 * (lib/api/milestone_responses.rb: state, iids, title, search, updated before/after, newest id
 * first), the row by id, writes, and the issue moves of a promotion.
 */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { MilestoneRow, MilestonesTable } from '../../db/tables/labels.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Whose milestones: these projects' and these groups'. */
export interface MilestoneScope {
  projectIds: number[];
  groupIds: number[];
}

export interface MilestoneFilters {
  state?: 'active' | 'closed';
  iids?: number[];
  title?: string;
  search?: string;
  updatedBefore?: string;
  updatedAfter?: string;
}

function containsPattern(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function milestonesQuery(db: Db, scope: MilestoneScope, f: MilestoneFilters = {}) {
  let qb = db.selectFrom('milestones').selectAll();
  const { projectIds, groupIds } = scope;
  if (projectIds.length === 0 && groupIds.length === 0) qb = qb.where(sql<boolean>`1 = 0`);
  else {
    qb = qb.where((eb) => eb.or([
      ...(projectIds.length ? [eb('project_id', 'in', projectIds)] : []),
      ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : []),
    ]));
  }
  if (f.state) qb = qb.where('state', '=', f.state);
  if (f.iids) qb = f.iids.length ? qb.where('iid', 'in', f.iids) : qb.where(sql<boolean>`1 = 0`);
  if (f.title !== undefined) qb = qb.where('title', '=', f.title);
  if (f.search) {
    const pattern = containsPattern(f.search);
    qb = qb.where((eb) => eb.or([
      eb(sql`lower(title)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(coalesce(description, ''))`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  if (f.updatedBefore) qb = qb.where('updated_at', '<', f.updatedBefore);
  if (f.updatedAfter) qb = qb.where('updated_at', '>', f.updatedAfter);
  return qb.orderBy('id', 'desc');
}

export function findMilestoneInScope(db: Db, scope: MilestoneScope, id: number): Promise<MilestoneRow | undefined> {
  return milestonesQuery(db, scope).where('id', '=', id).executeTakeFirst();
}

/** Whether a milestone of this title exists in the scope (other than `exceptId`). */
export async function milestoneTitleTaken(db: Db, scope: MilestoneScope, title: string, exceptId?: number): Promise<boolean> {
  let qb = milestonesQuery(db, scope, { title });
  if (exceptId !== undefined) qb = qb.where('id', '<>', exceptId);
  return (await qb.select('id').limit(1).executeTakeFirst()) !== undefined;
}

export function insertMilestone(db: Db, values: Insertable<MilestonesTable>): Promise<MilestoneRow> {
  return db.insertInto('milestones').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateMilestoneRow(db: Db, id: number, set: Updateable<MilestonesTable>): Promise<MilestoneRow | undefined> {
  return db.updateTable('milestones').set(set).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Deletes a milestone; its issues keep no milestone (the foreign key sets theirs null). */
export async function deleteMilestoneRow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('milestones').where('id', '=', id).execute();
}

export async function deleteMilestoneRows(db: Db, ids: number[]): Promise<void> {
  if (ids.length) await db.deleteFrom('milestones').where('id', 'in', ids).execute();
}

/** Ids of the milestones titled `title` in these projects. */
export async function sameTitledProjectMilestoneIds(db: Db, projectIds: number[], title: string): Promise<number[]> {
  if (projectIds.length === 0) return [];
  const rows = await db.selectFrom('milestones').select('id').where('project_id', 'in', projectIds).where('title', '=', title).execute();
  return rows.map((r) => r.id);
}

/** Moves the issues of some milestones (and their milestone events) onto another. */
export async function moveMilestoneIssues(db: Db, fromIds: number[], toId: number): Promise<void> {
  if (fromIds.length === 0) return;
  await db.updateTable('issues').set({ milestone_id: toId }).where('milestone_id', 'in', fromIds).execute();
  await db.updateTable('resource_milestone_events').set({ milestone_id: toId }).where('milestone_id', 'in', fromIds).execute();
}
