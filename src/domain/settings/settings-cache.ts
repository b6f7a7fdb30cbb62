/**
 * The instance settings of this process, read once and kept: they are read on hot paths (every
 * request's rate limit) and change rarely. A snapshot is dropped when this process writes
 * settings (settings.ts writeSettings) and when another process says it did (the
 * `settings` message of cluster/cluster.ts and cluster/siblings.ts); processes that share neither
 * Redis nor a primary see another's change once the snapshot expires (TTL_MS).
 *
 * Only handles registered here cache (the app's own); a transaction's handle always reads.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { defaultSettings, type Settings } from './catalogue.ts';

/** How long a snapshot is used without a word from the process that changed the settings. */
export const TTL_MS = 5_000;
/** The invalidation message processes exchange. */
export const SETTINGS_CHANGED = 'settings';

export class SettingsCache {
  private snapshot: Settings | null = null;
  private readAt = 0;
  /** Moves on every invalidation: a read that overlapped one is used but not kept. */
  private generation = 0;
  private reading: Promise<Settings> | null = null;
  private defaults: Partial<Settings> = {};
  private readonly publish: ((message: string) => void) | null;
  private readonly ttlMs: number;

  constructor(opts: { publish?: (message: string) => void; ttlMs?: number } = {}) {
    this.publish = opts.publish ?? null;
    this.ttlMs = opts.ttlMs ?? TTL_MS;
  }

  /** The instance's own defaults (configuration), under what was stored. */
  setDefaults(defaults: Partial<Settings>): void {
    this.defaults = defaults;
    this.drop();
  }

  /** The settings, synchronously when a fresh snapshot is kept. */
  current(read: () => Promise<Partial<Settings>>, now = Date.now()): Settings | Promise<Settings> {
    if (this.snapshot && now - this.readAt < this.ttlMs) return this.snapshot;
    if (this.reading) return this.reading;
    const generation = this.generation;
    const reading = read().then((stored) => {
      const settings: Settings = { ...defaultSettings(this.defaults), ...stored };
      if (generation === this.generation) {
        this.snapshot = settings;
        this.readAt = now;
      }
      return settings;
    }).finally(() => {
      if (this.reading === reading) this.reading = null;
    });
    this.reading = reading;
    return reading;
  }

  /** This process wrote settings: drop the snapshot here and tell the others. */
  written(): void {
    this.drop();
    this.publish?.(SETTINGS_CHANGED);
  }

  /** A message from another process; true when it was about settings. */
  receive(message: string): boolean {
    if (message !== SETTINGS_CHANGED) return false;
    this.drop();
    return true;
  }

  private drop(): void {
    this.generation += 1;
    this.snapshot = null;
    this.reading = null;
  }
}

const caches = new WeakMap<Kysely<DB>, SettingsCache>();

/** Reads through `db` are cached in `cache` from now on (app.ts). */
export function registerSettingsCache(db: Kysely<DB>, cache: SettingsCache): void {
  caches.set(db, cache);
}

/** The cache of `db`, or undefined (a transaction, an unregistered handle). */
export function cacheOf(db: Kysely<DB> | Transaction<DB>): SettingsCache | undefined {
  return caches.get(db as Kysely<DB>);
}
