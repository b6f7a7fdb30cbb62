/**
 * When a runner was last heard from (Ci::Runner#heartbeat). A runner asks for a job every few
 * seconds; writing contacted_at each time made every idle runner a writer, and each write moves
 * the write epoch that remembered rows, counts and list answers are kept by (db/read-cache.ts),
 * so a few idle runners kept every cache of the instance empty.
 *
 * As the Service does, the row is written when what the runner says about itself or its address
 * changed, when it never made contact, and otherwise only once its stored contact is older than
 * a random 40 to 55 minutes (UPDATE_CONTACT_COLUMN_EVERY, randomised so that runners do not write
 * together). The Service keeps the latest contact in Redis for its answers; kiln keeps it in the
 * process (`lastContact`), so the contacted_at and status it answers are those of the latest
 * request this process served; another server process of the instance answers the stored one.
 * Online means contacted within 2 hours (ONLINE_CONTACT_TIMEOUT), more than the longest a stored
 * contact can lag, so lists filtered by status in SQL stay right.
 */
import type { Kysely, Updateable } from 'kysely';
import type { CiRunnersTable, RunnerRow } from '../../db/tables/ci.ts';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { ONLINE_CONTACT_TIMEOUT_MS, touchRunner } from './runners.queries.ts';

const MINUTE = 60_000;
/** UPDATE_CONTACT_COLUMN_EVERY: 40 to 55 minutes, drawn for each contact. */
const persistAfterMs = () => (40 + Math.random() * 15) * MINUTE;
const MAX_REMEMBERED = 100_000;

/** runner id → the latest contact this process served, as ISO text. */
const latest = new Map<number, string>();

export type RunnerContact = Pick<Updateable<CiRunnersTable>, 'ip_address' | 'name' | 'version' | 'revision' | 'platform' | 'architecture'>;

/** Records a contact from `runner`, writing the row only when the rule above says so. */
export async function recordContact(db: Kysely<DB>, runner: RunnerRow, contact: RunnerContact, now: string = nowIso()): Promise<void> {
  if (latest.size >= MAX_REMEMBERED && !latest.has(runner.id)) latest.clear();
  latest.set(runner.id, now);
  const changed = (Object.keys(contact) as (keyof RunnerContact)[]).some((k) => contact[k] !== undefined && contact[k] !== runner[k]);
  const stored = runner.contacted_at === null ? null : Date.parse(runner.contacted_at);
  if (!changed && stored !== null && Date.parse(now) - stored < persistAfterMs()) return;
  await touchRunner(db, runner.id, contact, now);
}

/** The runner's latest contact: this process's when it has a later one than the row's. */
export function lastContact(r: Pick<RunnerRow, 'id' | 'contacted_at'>): string | null {
  const seen = latest.get(r.id);
  if (seen === undefined) return r.contacted_at;
  return r.contacted_at === null || seen > r.contacted_at ? seen : r.contacted_at;
}

/** Status of a runner from its last contact (the contact statuses of the deprecation table). */
export function runnerStatus(r: RunnerRow, now: Date = new Date()): string {
  const contacted = lastContact(r);
  if (contacted === null) return 'not_connected';
  return now.getTime() - Date.parse(contacted) < ONLINE_CONTACT_TIMEOUT_MS ? 'online' : 'offline';
}
