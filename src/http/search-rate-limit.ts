/**
 * The search rate limit (application settings `search_rate_limit`, per signed-in user, and
 * `search_rate_limit_unauthenticated`, per IP; the Service's check_rate_limit! with a one-minute
 * window). Counters live in Redis when KILN_REDIS_URL is set, so every process shares them, and
 * in this process otherwise. A limit of 0 turns it off.
 */
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { currentSettings } from '../domain/settings/settings.ts';
import { ApiError } from './errors.ts';

const WINDOW_MS = 60_000;

export interface SearchLimiter {
  /** Counts one search for `key`; false once more than `limit` were made in this window. */
  hit(key: string, limit: number): Promise<boolean>;
}

export function searchLimiter(redis: { client: Redis; prefix: string } | null): SearchLimiter {
  if (redis) {
    return {
      async hit(key, limit) {
        const name = `${redis.prefix}search-rate-limit:${key}`;
        const count = await redis.client.incr(name);
        // The first hit of a window starts its minute.
        if (count === 1) await redis.client.pexpire(name, WINDOW_MS);
        return count <= limit;
      },
    };
  }
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    async hit(key, limit) {
      const now = Date.now();
      if (windows.size > 10_000) for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
      let w = windows.get(key);
      if (!w || w.resetAt <= now) {
        w = { count: 0, resetAt: now + WINDOW_MS };
        windows.set(key, w);
      }
      w.count += 1;
      return w.count <= limit;
    },
  };
}

/** Throws the Service's 429 when the caller searched too often this minute. */
export async function checkSearchRateLimit(request: FastifyRequest): Promise<void> {
  const { db } = request.server.kiln;
  const caller = request.caller;
  const settings = await currentSettings(db);
  const limit = caller ? settings.search_rate_limit : settings.search_rate_limit_unauthenticated;
  if (limit <= 0) return;
  const key = caller ? `user:${caller.initialUser.id}` : `ip:${request.ip}`;
  if (!await request.server.searchLimiter.hit(key, limit)) {
    throw new ApiError(
      429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
      { 'retry-after': '60' },
    );
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    searchLimiter: SearchLimiter;
  }
}
