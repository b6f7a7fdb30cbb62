/**
 * Request throttles, driven by the application settings as the Service's Rack::Attack throttles
 * are (lib/gitlab/rack_attack.rb): on /api, `throttle_authenticated_api_*` per user and
 * `throttle_unauthenticated_api_*` per IP address; elsewhere (pages, OAuth, git over HTTP)
 * `throttle_authenticated_web_*` and `throttle_unauthenticated_*` (answered as
 * `throttle_unauthenticated_web_*`). Each is a number of requests a period of seconds; past it the
 * answer is the Service's: 429, `text/plain` `Retry later` (or rate_limiting_response_text) and
 * the RateLimit-* headers with Retry-After. KILN_RATE_LIMIT_PER_USER and KILN_RATE_LIMIT_PER_IP
 * are the instance's defaults of these settings (requests a minute, 0: off) until an
 * administrator sets them. Health and metrics (`/-/…`) are never throttled, as in the Service.
 *
 * Counters live in Redis when KILN_REDIS_URL is set, in the KILN_WORKERS primary without it, so
 * every server process shares them. The hook runs after authentication, so a user's budget
 * follows the user, not the address, and before parameter validation, so invalid requests count
 * too. Requests whose credential is refused never reach it: authentication counts them against
 * their IP through `limitRefusedCredential`.
 */
import fp from 'fastify-plugin';
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import type { Settings } from '../../domain/settings/catalogue.ts';
import { cacheOf } from '../../domain/settings/settings-cache.ts';
import { currentSettings } from '../../domain/settings/settings.ts';
import { ApiError } from '../errors.ts';
import { searchLimiter } from '../search-rate-limit.ts';
import { addRouteHook } from './route-hooks.ts';

const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * What the server processes of one instance share to count requests: Redis, or the primary
 * process's store without it. cluster/cluster.ts provides it; this layer does not import it.
 */
export interface SharedCounters {
  redis: Redis | null;
  keyPrefix: string;
  rateLimitStore?: RateLimitPluginOptions['store'];
}

interface Throttle {
  /** The Service's name of the throttle (RateLimit-Name). */
  name: 'throttle_authenticated_api' | 'throttle_unauthenticated_api' | 'throttle_authenticated_web' | 'throttle_unauthenticated_web';
  key: string;
  limit: number;
  periodMs: number;
}

/** The instance's defaults of the throttle settings: KILN_RATE_LIMIT_* requests a minute. */
export function throttleDefaults(config: Pick<Config, 'rateLimitPerIp' | 'rateLimitPerUser'>): Partial<Settings> {
  const out: Partial<Settings> = {};
  const perUser = config.rateLimitPerUser;
  const perIp = config.rateLimitPerIp;
  if (perUser > 0) {
    Object.assign(out, {
      throttle_authenticated_api_enabled: true,
      throttle_authenticated_api_requests_per_period: perUser,
      throttle_authenticated_api_period_in_seconds: 60,
      throttle_authenticated_web_enabled: true,
      throttle_authenticated_web_requests_per_period: perUser,
      throttle_authenticated_web_period_in_seconds: 60,
    });
  }
  if (perIp > 0) {
    Object.assign(out, {
      throttle_unauthenticated_api_enabled: true, throttle_unauthenticated_api_requests_per_period: perIp,
      throttle_unauthenticated_api_period_in_seconds: 60,
      throttle_unauthenticated_enabled: true,
      throttle_unauthenticated_requests_per_period: perIp,
      throttle_unauthenticated_period_in_seconds: 60,
    });
  }
  return out;
}

/** The throttle that counts this request, or null when it is off. */
function throttleFor(request: FastifyRequest, s: Settings): Throttle | null {
  const api = request.url.startsWith('/api/');
  const user = request.caller?.initialUser.id;
  let enabled: boolean;
  let limit: number;
  let period: number;
  let name: Throttle['name'];
  if (api && user !== undefined) {
    [name, enabled, limit, period] = ['throttle_authenticated_api', s.throttle_authenticated_api_enabled,
      s.throttle_authenticated_api_requests_per_period, s.throttle_authenticated_api_period_in_seconds];
  } else if (api) {
    [name, enabled, limit, period] = ['throttle_unauthenticated_api', s.throttle_unauthenticated_api_enabled,
      s.throttle_unauthenticated_api_requests_per_period, s.throttle_unauthenticated_api_period_in_seconds];
  } else if (user !== undefined) {
    [name, enabled, limit, period] = ['throttle_authenticated_web', s.throttle_authenticated_web_enabled,
      s.throttle_authenticated_web_requests_per_period, s.throttle_authenticated_web_period_in_seconds];
  } else {
    [name, enabled, limit, period] = ['throttle_unauthenticated_web', s.throttle_unauthenticated_enabled,
      s.throttle_unauthenticated_requests_per_period, s.throttle_unauthenticated_period_in_seconds];
  }
  if (!enabled) return null;
  // The period is part of the key: a changed period starts its own windows.
  const who = user !== undefined ? `user:${user}` : `ip:${request.ip}`;
  return { name, key: `${name}:${period}:${who}`, limit, periodMs: period * 1000 };
}

/**
 * Gitlab::RackAttack.throttled_response_headers: the limit as requests a minute (rounded up),
 * what was observed, the reset as Unix time and HTTP date, and Retry-After in seconds.
 */
function throttledHeaders(t: Throttle, observed: number, ttlMs: number, now = Date.now()): Record<string, string> {
  const retryAfter = Math.max(1, Math.ceil(ttlMs / 1000));
  const reset = new Date(Math.ceil((now + ttlMs) / 1000) * 1000);
  return {
    'ratelimit-name': t.name,
    'ratelimit-limit': String(Math.ceil((t.limit * 60_000) / t.periodMs)),
    'ratelimit-observed': String(observed),
    'ratelimit-remaining': String(t.limit > observed ? t.limit - observed : 0),
    'ratelimit-reset': String(reset.getTime() / 1000),
    'ratelimit-resettime': reset.toUTCString(),
    'retry-after': String(retryAfter),
  };
}

export default fp<{ cluster: SharedCounters | null }>(async (app, opts) => {
  const { db, config } = app.kiln;
  // The search rate limit is an application setting, counted whatever the request limits are;
  // shared through Redis when there is one (without it, each KILN_WORKERS process counts its own).
  app.decorate('searchLimiter', searchLimiter(opts.cluster?.redis ? { client: opts.cluster.redis, prefix: opts.cluster.keyPrefix } : null));
  cacheOf(db)?.setDefaults(throttleDefaults(config));

  const counted = new WeakMap<FastifyRequest, Throttle>();
  await app.register(rateLimit, {
    global: false,
    keyGenerator: (request) => counted.get(request)!.key,
    // The library is asked to count only: with no maximum its `remaining` tells the count
    // (RateLimit-Observed), and the limit is compared here.
    max: UNLIMITED,
    timeWindow: (request) => counted.get(request)!.periodMs,
    ...(opts.cluster?.redis ? { redis: opts.cluster.redis, nameSpace: `${opts.cluster.keyPrefix}rate-limit:` } : {}),
    ...(opts.cluster?.rateLimitStore ? { store: opts.cluster.rateLimitStore } : {}),
  });
  const count = app.createRateLimit();

  async function limit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.url.startsWith('/-/')) return;
    const pending = currentSettings(db);
    const settings = pending instanceof Promise ? await pending : pending;
    const t = throttleFor(request, settings);
    if (!t) return;
    counted.set(request, t);
    const result = await count(request);
    if (result.isAllowed) return;
    const observed = UNLIMITED - result.remaining;
    if (observed <= t.limit) {
      reply.header('x-ratelimit-limit', t.limit);
      reply.header('x-ratelimit-remaining', t.limit - observed);
      reply.header('x-ratelimit-reset', result.ttlInSeconds);
      return;
    }
    throw new ApiError(
      429,
      `${settings.rate_limiting_response_text || 'Retry later'}\n`,
      throttledHeaders(t, observed, result.ttl),
      'text/plain',
    );
  }

  // A callback hook: while the throttle is off (and the settings are in memory), a request pays
  // for no promise.
  const hook: preValidationHookHandler = (request, reply, done) => {
    const pending = request.url.startsWith('/-/') ? null : currentSettings(db);
    if (pending === null || (!(pending instanceof Promise) && throttleFor(request, pending) === null)) {
      done();
      return;
    }
    limit(request, reply).then(() => done(), done);
  };
  app.addHook('onRoute', (route) => {
    addRouteHook(route, 'preValidation', hook);
  });
  app.decorate('limitRefusedCredential', limit);
}, { name: 'rate-limit' });

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request whose credential was refused against its IP; throws 429 past the budget. */
    limitRefusedCredential?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}
