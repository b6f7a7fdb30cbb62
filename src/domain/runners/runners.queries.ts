/** Every Kysely call about runner rows. */
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CiRunnersTable, RunnerRow } from '../../db/tables/ci.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findRunner(db: Db, id: number): Promise<RunnerRow | undefined> {
  return db.selectFrom('ci_runners').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findRunnerByTokenDigest(db: Db, tokenDigest: string): Promise<RunnerRow | undefined> {
  return db.selectFrom('ci_runners').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

export async function findRunnersByIds(db: Db, ids: number[]): Promise<Map<number, RunnerRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('ci_runners').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export function insertRunner(db: Db, values: Omit<Insertable<CiRunnersTable>, 'id' | 'created_at' | 'updated_at'>): Promise<RunnerRow> {
  const now = nowIso();
  return db.insertInto('ci_runners').values({ ...values, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export async function updateRunner(db: Db, id: number, set: Omit<Updateable<CiRunnersTable>, 'id'>): Promise<RunnerRow> {
  return db.updateTable('ci_runners').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteRunner(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_runners').where('id', '=', id).execute();
}

/** When the runner was last heard from, and what it says about itself. */
export async function touchRunner(db: Db, id: number, set: Omit<Updateable<CiRunnersTable>, 'id'>): Promise<void> {
  await db.updateTable('ci_runners').set({ ...set, contacted_at: nowIso() }).where('id', '=', id).execute();
}

export interface RunnerFilters {
  type?: string;
  paused?: boolean;
  /** online, offline, stale, never_contacted / not_connected, against `now`. */
  status?: string;
  tagList?: string[];
  now: Date;
}

/** Contacted within this long: online (Ci::Runner::ONLINE_CONTACT_TIMEOUT, 2 hours). */
export const ONLINE_CONTACT_TIMEOUT_MS = 2 * 3600_000;
/** Not contacted for this long (or never, created this long ago): stale (Ci::Runner::STALE_TIMEOUT, 3 months). */
export const STALE_TIMEOUT_MS = 90 * 86_400_000;

export function runnersQuery(db: Db, f: RunnerFilters) {
  let q = db.selectFrom('ci_runners').selectAll();
  if (f.type) q = q.where('runner_type', '=', f.type);
  if (f.paused !== undefined) q = q.where('active', '=', f.paused ? 0 : 1);
  const online = new Date(f.now.getTime() - ONLINE_CONTACT_TIMEOUT_MS).toISOString();
  const stale = new Date(f.now.getTime() - STALE_TIMEOUT_MS).toISOString();
  if (f.status === 'online') q = q.where('contacted_at', '>', online);
  if (f.status === 'offline') q = q.where('contacted_at', '<=', online);
  if (f.status === 'not_connected' || f.status === 'never_contacted') q = q.where('contacted_at', 'is', null);
  if (f.status === 'stale') {
    q = q.where((eb) => eb.or([
      eb('contacted_at', '<=', stale),
      eb.and([eb('contacted_at', 'is', null), eb('created_at', '<=', stale)]),
    ]));
  }
  for (const tag of f.tagList ?? []) {
    // Tags are stored space-separated; pad both sides so one tag never matches inside another.
    const pattern = `% ${tag.replace(/[%_\\]/g, '\\$&')} %`;
    q = q.where(sql<boolean>`(' ' || tag_list || ' ') like ${pattern} escape '\\'`);
  }
  return q.orderBy('id', 'asc');
}

/** Status of a runner from its last contact (the contact statuses of the deprecation table). */
export function runnerStatus(r: RunnerRow, now: Date = new Date()): string {
  if (r.contacted_at === null) return 'not_connected';
  return now.getTime() - Date.parse(r.contacted_at) < ONLINE_CONTACT_TIMEOUT_MS ? 'online' : 'offline';
}
