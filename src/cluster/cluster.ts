/**
 * What the server processes of one kiln instance share through Redis (KILN_REDIS_URL): rate-limit
 * counters, and what each process must forget when another one writes. A revoked token or a
 * changed user drops the credentials remembered for them (http/auth/cache.ts), changed settings
 * drop the instance settings (domain/settings/settings-cache.ts); any write drops
 * the rows and counts remembered until the next write (db/read-cache.ts). Without Redis, the
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
import { SettingsCache } from '../domain/settings/settings-cache.ts';
import type { WriteEpoch } from '../db/write-epoch.ts';
import { ConfigError } from '../config/load.ts';
import type { PrimaryRateLimitStore } from './rate-limit-store.ts';

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
  close(): Promise<void>;
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
export function announceWrites(writes: WriteEpoch, publish: (message: string) => void): void {
  let announcing = false;
  writes.onWrite = () => {
    if (announcing) return;
    announcing = true;
    setImmediate(() => {
      announcing = false;
      publish(WRITES);
    });
  };
}

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

  const publish = (message: string): void => {
    redis.publish(channel, `${origin} ${message}`).catch((err: unknown) => opts.onError?.(err));
  };
  const authCache = new AuthCache({ publish });
  const settingsCache = new SettingsCache({ publish });

  announceWrites(opts.writes, publish);

  await subscriber.subscribe(channel);
  subscriber.on('message', (_channel: string, message: string) => {
    const space = message.indexOf(' ');
    if (space < 0 || message.slice(0, space) === origin) return;
    const body = message.slice(space + 1);
    if (body === WRITES) opts.writes.movedElsewhere();
    else if (!settingsCache.receive(body)) authCache.receive(body);
  });

  return {
    redis, keyPrefix, authCache, settingsCache,
    close: async () => {
      opts.writes.onWrite = null;
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
