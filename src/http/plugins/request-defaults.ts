/**
 * What every response carries and every request is checked for before routing: the request id,
 * the Service's security headers, the 414 limit on query strings, and `Content-Type` exactly
 * `application/json` (python-gitlab 3.12 compares the header as a whole string; reference
 * clients.md §1.2).
 */
import fp from 'fastify-plugin';
import { ApiError } from '../errors.ts';

export default fp(async (app) => {
  const maxQuery = app.kiln.config.maxQueryStringBytes;

  // Both hooks run on every request: callback style, which Fastify runs without a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-frame-options', 'SAMEORIGIN');
    reply.header('x-content-type-options', 'nosniff');
    const q = request.url.indexOf('?');
    if (q >= 0 && request.url.length - q - 1 > maxQuery) {
      done(new ApiError(414, { message: '414 Request-URI Too Large' }));
      return;
    }
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json;')) reply.header('content-type', 'application/json');
    done(null, payload);
  });
}, { name: 'request-defaults' });
