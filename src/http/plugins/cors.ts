/**
 * CORS on the API, as the Service's rack-cors rules for `/api/*` answer (config/application.rb,
 * `Rack::Cors` before Warden; src/oauth/cors.ts holds the OAuth endpoints' own, narrower rules):
 * so that a page on another origin can call the API with a token (gitbeaker in a browser).
 *
 * - Any origin, without credentials: `Access-Control-Allow-Origin: *` ("cross-origin requests
 *   must not have the session cookie available"). kiln's own origin (KILN_EXTERNAL_URL) gets its
 *   origin echoed with `Access-Control-Allow-Credentials: true`, the Service's first rule.
 * - Every method, any request header (a preflight's Access-Control-Request-Headers is echoed),
 *   preflights cached for 7200 s, and the pagination headers exposed to scripts.
 * - A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here, 200 and
 *   empty, before authentication, rate limits and routing; it carries no CORS headers when it asks
 *   for a method rack-cors does not know. Every other `/api/*` answer to a request with an Origin
 *   carries the headers, and every `/api/*` answer says `Vary: Origin`.
 */
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';

/** rack-cors's `methods: :any`, in its order. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const ALLOW_METHODS = METHODS.join(', ');
/** The Service's `expose:` list: what a script may read of an answer besides the simple headers. */
const EXPOSE = ['Link', 'X-Total', 'X-Total-Pages', 'X-Per-Page', 'X-Page', 'X-Next-Page', 'X-Prev-Page'].join(', ');
const MAX_AGE = '7200';

/** rack-cors's `/api/*`: `/api`, and everything under `/api/`. */
function isApiPath(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');
}

export default fp(async (app) => {
  const ownOrigin = new URL(app.kiln.config.externalUrl).origin;

  function allow(reply: FastifyReply, origin: string): void {
    const own = origin === ownOrigin;
    reply.header('access-control-allow-origin', own ? origin : '*');
    reply.header('access-control-allow-methods', ALLOW_METHODS);
    reply.header('access-control-expose-headers', EXPOSE);
    reply.header('access-control-max-age', MAX_AGE);
    if (own) reply.header('access-control-allow-credentials', 'true');
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (!isApiPath(request.url)) {
      done();
      return;
    }
    const vary = reply.getHeader('vary');
    reply.header('vary', typeof vary === 'string' && vary !== '' ? `${vary}, Origin` : 'Origin');
    const origin = request.headers.origin;
    if (typeof origin !== 'string') {
      done();
      return;
    }
    const asked = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && asked !== undefined) {
      // Answered whole here, as Rack::Cors answers a preflight before the application sees it.
      reply.removeHeader('vary');
      if (typeof asked === 'string' && METHODS.includes(asked.toUpperCase())) {
        allow(reply, origin);
        const headers = request.headers['access-control-request-headers'];
        if (typeof headers === 'string') reply.header('access-control-allow-headers', headers);
      }
      reply.code(200).send();
      return;
    }
    allow(reply, origin);
    done();
  });
}, { name: 'cors', dependencies: ['request-defaults'] });
