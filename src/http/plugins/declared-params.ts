/**
 * Validates `config.params` of each route into `request.input`: path, query and body parameters
 * merged as Grape merges them (path parameters win, then body, then query).
 */
import fp from 'fastify-plugin';
import { validateParams } from '../params.ts';

export default fp(async (app) => {
  app.decorateRequest('input', null as unknown as Record<string, unknown>);
  // Validation is synchronous: a callback hook spares every request a promise.
  app.addHook('preHandler', (request, _reply, done) => {
    const def = request.routeOptions.config.params;
    if (!def) {
      request.input = {};
      done();
      return;
    }
    const query = (request.query ?? {}) as Record<string, unknown>;
    const rawBody = request.body;
    const body = rawBody && typeof rawBody === 'object' && !Buffer.isBuffer(rawBody) && !Array.isArray(rawBody)
      ? rawBody as Record<string, unknown> : {};
    const path = (request.params ?? {}) as Record<string, unknown>;
    try {
      request.input = validateParams(def, { ...query, ...body, ...path });
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });

  // Document declared parameters in OpenAPI, as query for reads and body for writes. kiln
  // validates them itself (above), so Fastify's own validation is switched off in app.ts.
  app.addHook('onRoute', (route) => {
    const def = route.config?.params;
    if (!def || route.schema?.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const read = methods.every((m) => m === 'GET' || m === 'HEAD' || m === 'DELETE');
    route.schema = { ...route.schema, ...(read ? { querystring: def.schema } : { body: def.schema }) };
  });
}, { name: 'declared-params' });
