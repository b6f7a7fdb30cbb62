/**
 * Validates `config.params` of each route into `request.input`: path, query and body parameters
 * merged as Grape merges them (path parameters win, then body, then query). The hook is attached
 * to each route when it is registered, with its definition captured then.
 */
import fp from 'fastify-plugin';
import type { preValidationHookHandler, RouteOptions } from 'fastify';
import { validateRequestParams } from '../input/params.ts';

/**
 * Validation runs last among the preValidation hooks: after authentication, the route's own
 * guards (a 403 comes before a 400, reference §6.4) and the rate limit (invalid requests count).
 * Being a preValidation hook rather than a preHandler one spares most routes a lifecycle phase.
 * This plugin is registered after rate-limit.ts, so its onRoute hook sees the rate limiter's.
 */
function appendLast(route: RouteOptions, hook: preValidationHookHandler): void {
  const existing = route.preValidation;
  route.preValidation = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook];
}

const NOTHING_DECLARED: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export default fp(async (app) => {
  app.decorateRequest('input', null as unknown as Record<string, unknown>);

  app.addHook('onRoute', (route) => {
    const def = route.config?.params;
    if (!def) {
      if (route.config?.web) return;
      // An API route without declared parameters still finds `request.input`, empty.
      const none: preValidationHookHandler = (request, _reply, done) => {
        request.input = NOTHING_DECLARED;
        done();
      };
      appendLast(route, none);
      return;
    }
    // Validation is synchronous: a callback hook spares every request a promise.
    const validate: preValidationHookHandler = (request, _reply, done) => {
      const query = (request.query ?? NOTHING_DECLARED) as Record<string, unknown>;
      const rawBody = request.body;
      const body = rawBody && typeof rawBody === 'object' && !Buffer.isBuffer(rawBody) && !Array.isArray(rawBody)
        ? rawBody as Record<string, unknown> : NOTHING_DECLARED;
      const path = (request.params ?? NOTHING_DECLARED) as Record<string, unknown>;
      try {
        request.input = validateRequestParams(def, path, body, query);
      } catch (err) {
        done(err as Error);
        return;
      }
      done();
    };
    appendLast(route, validate);

    // Document declared parameters in OpenAPI, as query for reads and body for writes. kiln
    // validates them itself (above), so Fastify's own validation is switched off in app.ts.
    if (route.schema?.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const read = methods.every((m) => m === 'GET' || m === 'HEAD' || m === 'DELETE');
    route.schema = { ...route.schema, ...(read ? { querystring: def.schema } : { body: def.schema }) };
  });
}, { name: 'declared-params' });
