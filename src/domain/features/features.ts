/**
 * Feature flags (the Service's Feature on Flipper): a flag set through the API has gates —
 * `boolean` (on for everyone, or the mark of a flag switched off), `actors` ("Project:1",
 * "User:2", "Group:3"), `percentage_of_actors` and `percentage_of_time`. A flag never set (no
 * gate row) answers its definition's default_enabled; one set answers its gates. `featureEnabled`
 * is what code asks, with the actor it is about.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { FeatureGateRow } from '../../db/tables/instance-administration.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { featureDefinition, type FeatureActorKind } from './definitions.ts';
import { addToGate, allGates, deleteGates, gatesOf, setGate } from './features.queries.ts';

export interface FeatureActor { kind: FeatureActorKind; id: number }

export interface FeatureView {
  name: string;
  state: 'on' | 'off' | 'conditional';
  gates: { key: string; value: boolean | number | string[] }[];
}

/** Flipper's order of gates. */
const GATE_ORDER = ['boolean', 'actors', 'percentage_of_actors', 'percentage_of_time'];

export function viewOf(name: string, rows: FeatureGateRow[]): FeatureView {
  const boolean = rows.find((r) => r.key === 'boolean')?.value === 'true';
  const actors = rows.filter((r) => r.key === 'actors').map((r) => r.value);
  const pActors = Number(rows.find((r) => r.key === 'percentage_of_actors')?.value ?? 0);
  const pTime = Number(rows.find((r) => r.key === 'percentage_of_time')?.value ?? 0);
  const gates: FeatureView['gates'] = [];
  for (const key of GATE_ORDER) {
    // Only gates with a value (the entity's `next unless value.present?`).
    if (key === 'boolean' && boolean) gates.push({ key, value: true });
    if (key === 'actors' && actors.length) gates.push({ key, value: actors });
    if (key === 'percentage_of_actors' && pActors > 0) gates.push({ key, value: pActors });
    if (key === 'percentage_of_time' && pTime > 0) gates.push({ key, value: pTime });
  }
  // Flipper::Feature#state: on when fully on, off when no gate is open, conditional otherwise.
  const state = boolean || pTime === 100 ? 'on' : gates.length === 0 ? 'off' : 'conditional';
  return { name, state, gates };
}

/** Feature.all: every flag that was ever set, by name. */
export async function listFeatures(db: Kysely<DB>): Promise<FeatureView[]> {
  const rows = await allGates(db);
  const names = [...new Set(rows.map((r) => r.feature_key))].sort();
  return names.map((n) => viewOf(n, rows.filter((r) => r.feature_key === n)));
}

export async function getFeature(db: Kysely<DB>, name: string): Promise<FeatureView> {
  return viewOf(name, await gatesOf(db, name));
}

export type FeatureChange =
  | { value: true | false; actors: string[] }
  | { value: number; key: 'percentage_of_time' | 'percentage_of_actors' };

/**
 * Feature.enable / disable / enable_percentage_of_*: without actors, `true` clears every gate and
 * opens the boolean one, `false` clears them and leaves the flag set but closed; with actors,
 * each is added to or removed from the actors gate.
 */
export async function changeFeature(db: Kysely<DB>, name: string, change: FeatureChange): Promise<FeatureView> {
  await db.transaction().execute(async (trx) => {
    if ('key' in change) {
      await deleteGates(trx, name, 'boolean');
      await setGate(trx, name, change.key, String(change.value));
    } else if (change.actors.length === 0) {
      await deleteGates(trx, name);
      await setGate(trx, name, 'boolean', String(change.value));
    } else {
      for (const actor of change.actors) {
        if (change.value) await addToGate(trx, name, 'actors', actor);
        else await deleteGates(trx, name, 'actors', actor);
      }
      // A flag set only through actors is still a set flag.
      if ((await gatesOf(trx, name)).length === 0) await setGate(trx, name, 'boolean', 'false');
    }
  });
  return getFeature(db, name);
}

/** Feature.remove: the flag is unset again (back to its definition's default). */
export async function removeFeature(db: Kysely<DB>, name: string): Promise<void> {
  await deleteGates(db, name);
}

/** Flipper's percentage of actors: the same actors are in for a given percentage, in order. */
function actorBucket(name: string, flipperId: string): number {
  return crypto.createHash('sha1').update(`${name}${flipperId}`).digest().readUInt32BE(0) % 100_000;
}

/**
 * Whether the flag is on for the actor. The gates are read through the read cache, so asking on a
 * hot path (every git fetch) costs a query at most once per write epoch.
 */
export async function featureEnabled(db: Kysely<DB>, name: string, actor?: FeatureActor): Promise<boolean> {
  const rows = await cachedRead(db, `feature:${name}`, () => gatesOf(db, name));
  if (rows.length === 0) return featureDefinition(name)?.default_enabled ?? false;
  const gate = (key: string) => rows.filter((r) => r.key === key).map((r) => r.value);
  if (gate('boolean')[0] === 'true') return true;
  const flipperId = actor ? `${actor.kind}:${actor.id}` : null;
  if (flipperId && gate('actors').includes(flipperId)) return true;
  const pActors = Number(gate('percentage_of_actors')[0] ?? 0);
  if (flipperId && pActors > 0 && actorBucket(name, flipperId) < pActors * 1000) return true;
  const pTime = Number(gate('percentage_of_time')[0] ?? 0);
  return pTime > 0 && Math.random() * 100 < pTime;
}
