/** Every Kysely call of feature flags (their gates, migration 2026-11-29T0800). */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { FeatureGateRow } from '../../db/tables/instance-administration.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function allGates(db: Db): Promise<FeatureGateRow[]> {
  return db.selectFrom('feature_gates').selectAll().orderBy('feature_key').orderBy('id').execute();
}

export function gatesOf(db: Db, featureKey: string): Promise<FeatureGateRow[]> {
  return db.selectFrom('feature_gates').selectAll().where('feature_key', '=', featureKey).orderBy('id').execute();
}

export async function deleteGates(db: Db, featureKey: string, key?: string, value?: string): Promise<void> {
  let q = db.deleteFrom('feature_gates').where('feature_key', '=', featureKey);
  if (key !== undefined) q = q.where('key', '=', key);
  if (value !== undefined) q = q.where('value', '=', value);
  await q.execute();
}

/** Sets a single-valued gate (boolean, percentages): the old value goes first. */
export async function setGate(db: Db, featureKey: string, key: string, value: string): Promise<void> {
  await deleteGates(db, featureKey, key);
  const now = nowIso();
  await db.insertInto('feature_gates').values({ feature_key: featureKey, key, value, created_at: now, updated_at: now }).execute();
}

/** Adds a member to a set gate (actors); the unique index keeps it once. */
export async function addToGate(db: Db, featureKey: string, key: string, value: string): Promise<void> {
  const now = nowIso();
  await db.insertInto('feature_gates').values({ feature_key: featureKey, key, value, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['feature_key', 'key', 'value']).doNothing()).execute();
}
