/**
 * One mapping from failures to the Service's bodies (reference §6.2): ApiError as thrown;
 * Fastify's own client errors in the Service's shape; unknown routes 404 `{"error":"404 Not
 * Found"}`, a known path with another method included; anything unexpected 500 with nothing
 * leaked but the request id in the log.
 *
 * The Service's API ends in a catch-all route (`route :any, '*path'` in lib/api/api.rb, reference
 * §6.2) that answers `404 Not Found` for any method. Grape's router tries that route before it
 * would answer 405 for a path known under other methods, so the Service never answers 405 there:
 * kiln does not either. Only OPTIONS on a known API path gets Grape's own answer, 204 with
 * `Allow` (a CORS preflight never gets here: plugins/cors.ts answers it first).
 */
import fp from 'fastify-plugin';
import FindMyWay from 'find-my-way';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, routeNotFound } from '../errors.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function send(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  reply.code(err.statusCode);
  if (err.statusCode === 204 || err.statusCode === 304) return reply.send();
  if (err.contentType === 'text/plain') return reply.type('text/plain').send(String(err.body));
  return reply.type('application/json').send(JSON.stringify(err.body));
}

/**
 * The web interface's pages live at the Service's paths (`/:namespace/:project/-/tree/…`), whose
 * namespaces nest to any depth: no fixed route shape holds them without catching the API's own
 * unknown paths. So the web registers one answerer here, asked for a GET, HEAD or POST outside
 * `/api/` that no route matched; it answers (true) or leaves the request to the API's 404.
 */
export type PageFallback = (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;

declare module 'fastify' {
  interface FastifyInstance {
    unmatchedPages: { answer: PageFallback | null };
  }
}

export default fp(async (app) => {
  app.decorate('unmatchedPages', { answer: null as PageFallback | null });
  // A mirror of the route table, asked only for OPTIONS on a path no route matched: its `Allow`.
  const mirror = FindMyWay({ ignoreTrailingSlash: false, maxParamLength: 1000 });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      try {
        mirror.on(m as (typeof METHODS)[number], route.url, () => undefined);
      } catch {
        // Duplicate shapes (a route registered under two constraints) need no second entry.
      }
    }
  });

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?', 1)[0];
    const pages = request.server.unmatchedPages.answer;
    if (pages && (request.method === 'GET' || request.method === 'HEAD' || request.method === 'POST') && !path.startsWith('/api/')) {
      if (await pages(request, reply)) return reply;
    }
    request.server.httpMetrics?.observeUnmatched(request, reply);
    if (request.method === 'OPTIONS' && path.startsWith('/api/')) {
      const allowed = METHODS.filter((m) => m !== 'OPTIONS' && m !== 'HEAD' && mirror.find(m, path) !== null);
      if (allowed.length > 0) {
        // Grape's Allow: OPTIONS, the path's methods, HEAD after them wherever GET is one.
        if (allowed.includes('GET')) allowed.push('HEAD');
        return reply.code(204).header('allow', ['OPTIONS', ...allowed].join(', ')).send();
      }
    }
    return send(reply, routeNotFound());
  });

  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    // Failures before routing finished (a 414 on an unknown path) never reach the 404 handler.
    if (request.is404) request.server.httpMetrics?.observeUnmatched(request, reply);
    if (error instanceof ApiError) {
      if (error.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return send(reply, error);
    }
    const status = (error as FastifyError).statusCode;
    if (status === 429) return send(reply, new ApiError(429, { message: 'Retry later' }));
    if (status === 413) return send(reply, new ApiError(413, { message: '413 Request Entity Too Large' }));
    if (status === 415) return send(reply, new ApiError(415, { message: `415 Unsupported Media Type` }));
    if (status !== undefined && status >= 400 && status < 500) {
      // Malformed JSON, bad Content-Length and the like: the client's fault, said plainly.
      return send(reply, new ApiError(400, { message: `400 Bad request - ${error.message}` }));
    }
    request.log.error({ err: error }, 'unexpected error');
    return send(reply, internalError());
  });
}, { name: 'error-handling' });
