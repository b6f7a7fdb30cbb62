/**
 * Rows of hot point reads, remembered until the next write through the same database handle
 * (write-epoch.ts) and for at most TTL_MS, which bounds how long a write made by another server
 * process can go unseen. Only handles registered here cache (the app's own handle); reads inside
 * a transaction use the transaction's handle and always go to the database.
 */
import type { Kysely } from 'kysely';
import type { DB } from './types.ts';
import type { WriteEpoch } from './write-epoch.ts';

const TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Store {
  writes: WriteEpoch;
  entries: Map<string, { value: unknown; epoch: number; at: number }>;
}

const stores = new WeakMap<Kysely<DB>, Store>();

export function registerReadCache(db: Kysely<DB>, writes: WriteEpoch): void {
  stores.set(db, { writes, entries: new Map() });
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
