/**
 * What the server processes of one kiln instance share through Redis (KILN_REDIS_URL): rate-limit
 * counters, and what each process must forget when another one writes. A revoked token or a
 * changed user drops the credentials remembered for them (http/auth/cache.ts), changed settings
 * drop the instance settings (domain/settings/settings-cache.ts); any write drops
 * the rows and counts remembered until the next write (db/read-cache.ts). With Redis this holds at
 * once, not merely soon: the answer to a request that wrote leaves only after its announcements
 * are in Redis, and a request on another process first hears every announcement made before it
 * arrived (`consistency`, http/plugins/read-your-writes.ts). Without Redis, the
 * processes of one KILN_WORKERS primary hear these through it (cluster/siblings.ts); other
 * processes see another's writes only once those caches expire (5 s for credentials, 2 s for rows).
 *
 * Keys and the channel are named after the instance (a digest of its secret_key_base, which
 * every process of the instance reads from the database), so two kiln instances on one Redis
 * neither share a user's rate budget nor hear each other's invalidations.
 */
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { AuthCache } from '../http/auth/cache.ts';
import { SETTINGS_CHANGED, SettingsCache } from '../domain/settings/settings-cache.ts';
import type { WriteEpoch } from '../db/write-epoch.ts';
import { ConfigError } from '../config/load.ts';
import type { PrimaryRateLimitStore } from './rate-limit-store.ts';

declare module 'ioredis' {
  interface RedisCommander {
    /** ANNOUNCE_SCRIPT: moves the counter (KEYS[1]) and publishes on KEYS[2]; the new count. */
    kilnAnnounce(counterKey: string, channel: string, origin: string, message: string): Promise<number>;
  }
}

export interface Cluster {
  /**
   * The connection for commands (rate-limit counters, publishing); null for the server processes
   * of one KILN_WORKERS primary without Redis, which share through it (cluster/siblings.ts).
   */
  redis: Redis | null;
  /** Without Redis: the @fastify/rate-limit store that counts in the primary (cluster/rate-limit-store.ts). */
  rateLimitStore?: typeof PrimaryRateLimitStore;
  /** Prefix of this instance's keys: `kiln:<instance>:`. */
  keyPrefix: string;
  authCache: AuthCache;
  /** The instance settings of this process, dropped when another process changes them. */
  settingsCache: SettingsCache;
  /**
   * With Redis, what makes a write seen at once everywhere (README, Several instances): `settled`
   * resolves once every change this process announced is in Redis (a response waits for it), and
   * `caughtUp` once this process has heard every change any process announced before it was
   * called (a request waits for it before reading). Null when nothing needs waiting for.
   */
  consistency?: ReadYourWrites;
  close(): Promise<void>;
}

export interface ReadYourWrites {
  /** Null when every announcement of this process is already in Redis. */
  settled(): Promise<void> | null;
  caughtUp(): Promise<void>;
}

export interface JoinOptions {
  redisUrl: string;
  secretKeyBase: string;
  writes: WriteEpoch;
  /** Where a failed publish is reported; the caches' expiry still bounds what it costs. */
  onError?: (err: unknown) => void;
}

export const WRITES = 'writes';

/**
 * Tells `publish` of this process's writes. A burst of writes (a transaction's statements, then
 * its commit) is announced once, on the next turn of the event loop: by then the statements that
 * caused it have finished.
 */
export function announceWrites(writes: WriteEpoch, publish: (message: string) => void): () => void {
  let announcing = false;
  const announce = (): void => {
    if (!announcing) return;
    announcing = false;
    publish(WRITES);
  };
  writes.onWrite = () => {
    if (announcing) return;
    announcing = true;
    setImmediate(announce);
  };
  // Announces a pending burst now (before a response leaves), not on the next turn.
  return announce;
}

/**
 * How long a request waits for announcements that Redis counted but this process has not heard
 * yet (in flight on the subscriber connection: normally well under a millisecond). Past it the
 * messages are taken as lost (a reconnecting subscriber misses what was published meanwhile) and
 * this process forgets everything it remembered instead.
 */
const CATCH_UP_TIMEOUT_MS = 1_000;

/**
 * Announcing is one atomic step in Redis: the instance's announcement counter moves and the
 * message, numbered with it, is published. A subscriber hears messages in the order they were
 * numbered, so a process that has heard number n has heard every earlier one.
 */
const ANNOUNCE_SCRIPT = `local n = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', KEYS[2], ARGV[1] .. ' ' .. n .. ' ' .. ARGV[2])
return n`;

export async function joinCluster(opts: JoinOptions): Promise<Cluster> {
  const instance = crypto.createHash('sha256').update(`kiln-instance:${opts.secretKeyBase}`).digest('hex').slice(0, 16);
  const keyPrefix = `kiln:${instance}:`;
  const channel = `${keyPrefix}invalidations`;
  // Each process hears its own messages too; they carry its origin so it can skip them.
  const origin = crypto.randomBytes(8).toString('hex');
  // Loaded only with KILN_REDIS_URL: a process without Redis neither parses nor holds it (~12 MB).
  const { Redis: RedisClient } = await import('ioredis');
  const redis = new RedisClient(opts.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  const subscriber = new RedisClient(opts.redisUrl, { lazyConnect: true });
  // Once connected, a lost connection is reported and ioredis reconnects by itself; meanwhile
  // rate limits fail requests, and the caches' expiry bounds what the other processes miss.
  let connected = false;
  let refusal: unknown = null;
  const report = (err: unknown) => {
    if (connected) opts.onError?.(err);
    else refusal = err;
  };
  redis.on('error', report);
  subscriber.on('error', report);
  try {
    await Promise.all([redis.connect(), subscriber.connect()]);
  } catch (err) {
    redis.disconnect();
    subscriber.disconnect();
    // ioredis rejects with "Connection is closed."; the reason came as an error event before.
    const reason = refusal ?? err;
    throw new ConfigError([`KILN_REDIS_URL: cannot reach Redis (${reason instanceof Error ? reason.message : String(reason)})`]);
  }
  connected = true;

  const counterKey = `${keyPrefix}announcements`;
  // Sent by its digest (EVALSHA) after the first time.
  redis.defineCommand('kilnAnnounce', { numberOfKeys: 2, lua: ANNOUNCE_SCRIPT });
  // Announcements not yet acknowledged by Redis; a response that follows a write waits for them.
  const inFlight = new Set<Promise<unknown>>();
  const publish = (message: string): void => {
    const sent = redis.kilnAnnounce(counterKey, channel, origin, message)
      .catch((err: unknown) => opts.onError?.(err))
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };
  const authCache = new AuthCache({ publish });
  const settingsCache = new SettingsCache({ publish });

  const flushWrites = announceWrites(opts.writes, publish);

  // The highest announcement number heard, and the requests waiting to hear up to theirs.
  let heard = 0;
  const waiting = new Set<{ upTo: number; resolve: () => void; timer?: NodeJS.Timeout }>();
  const forgetEverything = (): void => {
    opts.writes.movedElsewhere();
    authCache.clear();
    settingsCache.receive(SETTINGS_CHANGED);
  };

  await subscriber.subscribe(channel);
  subscriber.on('message', (_channel: string, message: string) => {
    const first = message.indexOf(' ');
    const second = first < 0 ? -1 : message.indexOf(' ', first + 1);
    if (second < 0) return;
    const n = Number(message.slice(first + 1, second));
    if (message.slice(0, first) !== origin) {
      const body = message.slice(second + 1);
      if (body === WRITES) opts.writes.movedElsewhere();
      else if (!settingsCache.receive(body)) authCache.receive(body);
    }
    if (n > heard) heard = n;
    for (const w of waiting) {
      if (w.upTo <= heard) {
        waiting.delete(w);
        clearTimeout(w.timer);
        w.resolve();
      }
    }
  });
  // Whatever was announced before this process listened is none of its concern.
  heard = Math.max(heard, Number(await redis.get(counterKey)) || 0);

  const consistency: ReadYourWrites = {
    settled: () => {
      flushWrites();
      if (inFlight.size === 0) return null;
      return Promise.all(inFlight).then(() => undefined);
    },
    caughtUp: async () => {
      let upTo: number;
      try {
        upTo = Number(await redis.get(counterKey)) || 0;
      } catch (err) {
        // Redis does not answer: nobody can say what changed, so nothing remembered is trusted.
        opts.onError?.(err);
        forgetEverything();
        return;
      }
      if (upTo === heard) return;
      if (upTo < heard) {
        // The counter went back: Redis restarted empty. What was said meanwhile is unknown.
        forgetEverything();
        heard = upTo;
        return;
      }
      await new Promise<void>((resolve) => {
        const w: { upTo: number; resolve: () => void; timer?: NodeJS.Timeout } = { upTo, resolve };
        waiting.add(w);
        w.timer = setTimeout(() => {
          if (!waiting.delete(w)) return;
          forgetEverything();
          if (upTo > heard) heard = upTo;
          resolve();
        }, CATCH_UP_TIMEOUT_MS);
        w.timer.unref();
      });
    },
  };

  return {
    redis, keyPrefix, authCache, settingsCache, consistency,
    close: async () => {
      opts.writes.onWrite = null;
      for (const w of waiting) {
        clearTimeout(w.timer);
        w.resolve();
      }
      waiting.clear();
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
