/**
 * What kiln derives from a repository's objects, kept in memory: an object id names immutable
 * content, so an answer keyed by one (a commit's metadata and languages, a directory entry's last
 * commit, the entry a path names in a commit, a README rendered from its blob) never goes stale
 * and needs no expiry. Pages stay fresh because they read the ref first (ref-files.ts, on every
 * request) and look up by the id it names now: a push moves the ref, the next page asks for the
 * new id and misses.
 *
 * One least-recently-used map for all of them, bounded in entries and in (estimated) bytes, so a
 * process serving many repositories holds at most MAX_BYTES whatever they are. Keys name the
 * repository where the answer depends on which objects it holds (its git directory), and never
 * carry a viewer: callers check permissions before they ask.
 */

/** Most entries, and most estimated bytes, the cache holds. */
export const MAX_ENTRIES = 50_000;
export const MAX_BYTES = 64 * 1024 * 1024;
/** An answer larger than this is computed but not kept (it would push out hundreds of others). */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** What an entry costs beyond its value: the key, the map's slot. */
const ENTRY_OVERHEAD = 64;

interface Slot {
  value: unknown;
  bytes: number;
}

/** A map that forgets its least recently used entries past `maxEntries` or `maxBytes`. */
export class BoundedLru {
  readonly #slots = new Map<string, Slot>();
  #bytes = 0;
  readonly maxEntries: number;
  readonly maxBytes: number;

  constructor(maxEntries: number, maxBytes: number) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  get size(): number { return this.#slots.size; }
  get bytes(): number { return this.#bytes; }

  has(key: string): boolean { return this.#slots.has(key); }

  /** The value, marked as just used; undefined when absent (a kept `null` is an answer). */
  get<V>(key: string): V | undefined {
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    // A Map iterates in insertion order: re-inserting makes the entry the newest.
    this.#slots.delete(key);
    this.#slots.set(key, slot);
    return slot.value as V;
  }

  set(key: string, value: unknown, bytes: number): void {
    const cost = bytes + key.length * 2 + ENTRY_OVERHEAD;
    this.delete(key);
    if (cost > Math.min(MAX_ENTRY_BYTES, this.maxBytes)) return;
    this.#slots.set(key, { value, bytes: cost });
    this.#bytes += cost;
    while (this.#slots.size > this.maxEntries || this.#bytes > this.maxBytes) {
      const oldest = this.#slots.keys().next().value!;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    this.#slots.delete(key);
    this.#bytes -= slot.bytes;
  }

  clear(): void {
    this.#slots.clear();
    this.#bytes = 0;
  }
}

export const repositoryCache = new BoundedLru(MAX_ENTRIES, MAX_BYTES);

/** A rough size of a value in memory: two bytes a character of its JSON. */
export function estimateBytes(value: unknown): number {
  if (value === null || value === undefined) return 8;
  if (typeof value === 'string') return value.length * 2;
  return (JSON.stringify(value)?.length ?? 8) * 2;
}

const pending = new Map<string, Promise<unknown>>();

/**
 * The kept answer for `key`, or `compute()`'s (then kept): concurrent callers of one missing key
 * share one computation. `key` must name immutable content (object ids, never a ref name), and
 * callers must not change the value they get (it is shared).
 */
export async function remembered<V>(key: string, compute: () => Promise<V>, bytes: (v: V) => number = estimateBytes): Promise<V> {
  if (repositoryCache.has(key)) return repositoryCache.get<V>(key)!;
  const running = pending.get(key);
  if (running) return running as Promise<V>;
  const work = compute().then((value) => {
    repositoryCache.set(key, value, bytes(value));
    return value;
  }).finally(() => pending.delete(key));
  pending.set(key, work);
  return work;
}

/** A cache key from its parts (NUL never occurs in a path, ref or object id). */
export const cacheKey = (...parts: string[]): string => parts.join('\0');
