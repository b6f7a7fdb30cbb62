/**
 * Capped pagination counts, remembered briefly. Counting up to 10,001 rows is the most expensive
 * part of a list page (measured: ~260 µs of SQLite time on a 100k-user table, more than the page
 * itself), and a client walking pages asks the same count again and again. An entry is reused
 * only while no write has gone through this process's database handle since it was computed
 * (db/write-epoch.ts), and never for longer than TTL_MS, which bounds how stale a total can be
 * after a write made by another server process.
 */
import type { WriteEpoch } from '../db/write-epoch.ts';

const TTL_MS = 2_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  count: number;
  epoch: number;
  at: number;
}

export class CountCache {
  private readonly entries = new Map<string, Entry>();
  private readonly writes: WriteEpoch;

  constructor(writes: WriteEpoch) {
    this.writes = writes;
  }

  async count(key: string, compute: () => Promise<number>, now = Date.now()): Promise<number> {
    const hit = this.entries.get(key);
    if (hit && hit.epoch === this.writes.value && now - hit.at < TTL_MS) return hit.count;
    const epoch = this.writes.value;
    const count = await compute();
    // A write that overlapped the count moved the epoch: such a result is used but not kept.
    if (epoch === this.writes.value) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { count, epoch, at: now });
    }
    return count;
  }
}
