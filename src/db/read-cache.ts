/**
 * Rows of hot point reads, and whole answers of hot lists (http/lists/remembered-pages.ts), remembered
 * until the next write through the same database handle (write-epoch.ts) and for at most TTL_MS,
 * which bounds how long a write made by another server process can go unseen. Only handles
 * registered here cache (the app's own handle); reads inside a transaction use the transaction's
 * handle and always go to the database.
 */
import type { Kysely } from 'kysely';
import type { DB } from './types.ts';
import type { WriteEpoch } from './write-epoch.ts';

export const TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;
/** Remembered answers are whole pages (18–33 KB for 20 users or jobs): bounded by their size. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

interface Answer { value: unknown; epoch: number; at: number; bytes: number }

interface Store {
  writes: WriteEpoch;
  entries: Map<string, { value: unknown; epoch: number; at: number }>;
  answers: Map<string, Answer>;
  answerBytes: number;
}

const stores = new WeakMap<Kysely<DB>, Store>();

export function registerReadCache(db: Kysely<DB>, writes: WriteEpoch): void {
  stores.set(db, { writes, entries: new Map(), answers: new Map(), answerBytes: 0 });
}

/**
 * The remembered value when there is one, synchronously; otherwise a promise of the read. Hot
 * handlers use it to answer without waiting on a promise when the row is remembered.
 */
export function cachedReadNow<T>(db: Kysely<DB>, key: string, read: () => Promise<T>, now = Date.now()): T | Promise<T> {
  const store = stores.get(db);
  if (!store) return read();
  const hit = store.entries.get(key);
  if (hit && hit.epoch === store.writes.value && now - hit.at < TTL_MS) return hit.value as T;
  const epoch = store.writes.value;
  return read().then((value) => {
    // A write that overlapped the read moved the epoch: its result is used but not kept.
    if (epoch === store.writes.value) {
      if (store.entries.size >= MAX_ENTRIES) store.entries.clear();
      store.entries.set(key, { value, epoch, at: now });
    }
    return value;
  });
}

export async function cachedRead<T>(db: Kysely<DB>, key: string, read: () => Promise<T>, now = Date.now()): Promise<T> {
  return cachedReadNow(db, key, read, now);
}

/**
 * The write epoch a computation of an answer starts in, or null when this handle does not cache
 * (a transaction's). An answer computed from it is kept only if no write moved it meanwhile.
 */
export function answerEpoch(db: Kysely<DB>): number | null {
  return stores.get(db)?.writes.value ?? null;
}

/** A whole answer remembered by rememberAnswer, while no write has happened since and within the TTL. */
export function rememberedAnswer<T>(db: Kysely<DB>, key: string, now = Date.now()): T | undefined {
  const store = stores.get(db);
  const hit = store?.answers.get(key);
  if (!hit || hit.epoch !== store!.writes.value || now - hit.at >= TTL_MS) return undefined;
  return hit.value as T;
}

/**
 * Keeps an answer computed from `epoch` (answerEpoch), unless a write moved it meanwhile; `bytes`
 * is its size, and the oldest answers go when they would pass MAX_ANSWER_BYTES together.
 */
export function rememberAnswer(db: Kysely<DB>, key: string, value: unknown, epoch: number, bytes: number, now = Date.now()): void {
  const store = stores.get(db);
  if (!store || epoch !== store.writes.value || bytes > MAX_ANSWER_BYTES / 8) return;
  const old = store.answers.get(key);
  if (old) {
    store.answers.delete(key);
    store.answerBytes -= old.bytes;
  }
  for (const [k, a] of store.answers) {
    if (store.answerBytes + bytes <= MAX_ANSWER_BYTES) break;
    store.answers.delete(k);
    store.answerBytes -= a.bytes;
  }
  store.answers.set(key, { value, epoch, at: now, bytes });
  store.answerBytes += bytes;
}

/**
 * Rows by id, each remembered on its own as cachedRead remembers one (until the next write, TTL_MS
 * at most), the ids not remembered read together by `read`: for what many pages name again and
 * again (the people beside a project's issues, the project's own settings), each page reads only
 * what no page before it read since the last write. Rows come back in no particular order; an id
 * without a row is read again next time.
 */
export async function cachedRowsByIds<T extends { id: number }>(
  db: Kysely<DB>, kind: string, ids: readonly number[], read: (missing: number[]) => Promise<T[]>, now = Date.now(),
): Promise<T[]> {
  const store = stores.get(db);
  if (!store) return read([...new Set(ids)]);
  const epoch = store.writes.value;
  const out: T[] = [];
  const missing: number[] = [];
  const seen = new Set<number>();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const hit = store.entries.get(`${kind}:${id}`);
    if (hit && hit.epoch === epoch && now - hit.at < TTL_MS) out.push(hit.value as T);
    else missing.push(id);
  }
  if (missing.length === 0) return out;
  const rows = await read(missing);
  // A write that overlapped the read moved the epoch: its rows are used but not kept.
  const keep = epoch === store.writes.value;
  for (const row of rows) {
    out.push(row);
    if (!keep) continue;
    if (store.entries.size >= MAX_ENTRIES) store.entries.clear();
    store.entries.set(`${kind}:${row.id}`, { value: row, epoch, at: now });
  }
  return out;
}
