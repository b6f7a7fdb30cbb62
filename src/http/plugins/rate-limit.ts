/**
 * Request rate limits (spec, Errors: 429): per authenticated user, or per IP for anonymous
 * callers, each a configurable number of requests a minute (0 turns one off). Counters live in
 * Redis when KILN_REDIS_URL is set, so every server process shares them. Runs after
 * authentication so that a user's limit follows the user, not the address, and before parameter
 * validation so that invalid requests count too. Requests whose credential is refused never reach
 * the route's hook: authentication counts them against their IP through
 * `limitRefusedCredential`.
 */
import fp from 'fastify-plugin';
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../errors.ts';
import { searchLimiter } from '../search-rate-limit.ts';

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

export default fp<{ cluster: SharedCounters | null }>(async (app, opts) => {
  const { rateLimitPerIp, rateLimitPerUser } = app.kiln.config;
  // The search rate limit is an application setting, counted whatever the request limits are;
  // shared through Redis when there is one (without it, each KILN_WORKERS process counts its own).
  app.decorate('searchLimiter', searchLimiter(opts.cluster?.redis ? { client: opts.cluster.redis, prefix: opts.cluster.keyPrefix } : null));
  if (rateLimitPerIp === 0 && rateLimitPerUser === 0) return;
  await app.register(rateLimit, {
    hook: 'preValidation',
    timeWindow: 60_000,
    max: (request) => {
      const limit = request.caller ? rateLimitPerUser : rateLimitPerIp;
      return limit === 0 ? UNLIMITED : limit;
    },
    keyGenerator: (request) => (request.caller ? `user:${request.caller.initialUser.id}` : `ip:${request.ip}`),
    ...(opts.cluster?.redis ? { redis: opts.cluster.redis, nameSpace: `${opts.cluster.keyPrefix}rate-limit:` } : {}),
    ...(opts.cluster?.rateLimitStore ? { store: opts.cluster.rateLimitStore } : {}),
    // The Service answers a plain "Retry later" with Retry-After (clients.md: python-gitlab retries on it).
    errorResponseBuilder: (_request, context) => new ApiError(429, { message: 'Retry later' }, { 'retry-after': String(Math.ceil(context.ttl / 1000)) }),
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
  });
  if (rateLimitPerIp > 0) {
    const limit = app.rateLimit();
    const limitRefused = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      await limit.call(app, request, reply);
    };
    app.decorate('limitRefusedCredential', limitRefused);
  }
}, { name: 'rate-limit' });

declare module 'fastify' {
  interface FastifyInstance {
    /** With a per-IP limit: counts a request whose credential was refused; throws 429 past the budget. */
    limitRefusedCredential?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}
