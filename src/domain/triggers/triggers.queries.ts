/** Every Kysely call about pipeline trigger tokens. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CiTriggerRow } from '../../db/tables/ci-variables.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function projectTriggersQuery(db: Db, projectId: number) {
  return db.selectFrom('ci_triggers').selectAll().where('project_id', '=', projectId).orderBy('id');
}

export function findTriggerInProject(db: Db, projectId: number, id: number): Promise<CiTriggerRow | undefined> {
  return db.selectFrom('ci_triggers').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export function findTriggerByDigest(db: Db, tokenDigest: string): Promise<CiTriggerRow | undefined> {
  return db.selectFrom('ci_triggers').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

export function insertTrigger(db: Db, t: Omit<CiTriggerRow, 'id' | 'created_at' | 'updated_at' | 'last_used_at'>): Promise<CiTriggerRow> {
  const now = nowIso();
  return db.insertInto('ci_triggers').values({
    ...t, last_used_at: null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export function updateTriggerDescription(db: Db, id: number, description: string): Promise<CiTriggerRow | undefined> {
  return db.updateTable('ci_triggers').set({ description, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteTrigger(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_triggers').where('id', '=', id).execute();
}

export async function touchTrigger(db: Db, id: number, at: string): Promise<void> {
  await db.updateTable('ci_triggers').set({ last_used_at: at }).where('id', '=', id).execute();
}
