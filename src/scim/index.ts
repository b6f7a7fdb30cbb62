/**
 * The SCIM 2.0 API (RFC 7643/7644) at /api/scim/v2/groups/:group_path: its own scope, because
 * everything about it is SCIM's rather than the REST API's: `application/scim+json` bodies in and
 * out, the group's SCIM token instead of user credentials (routes say `config.web`, so the REST
 * authentication never runs), and every failure, a malformed body or an unknown route included,
 * in SCIM's error shape (RFC 7644 §3.12).
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { ApiError } from '../http/errors.ts';
import { invalidSyntax, isScimErrorBody, scimError, scimErrorBody } from './errors.ts';
import users, { SCIM_CONTENT_TYPE } from './users.ts';

const JSON_ERRORS = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY']);

/** Methods each resource path answers, for 405 Allow on the others. */
const ALLOWED: [RegExp, string][] = [
  [/^\/api\/scim\/v2\/groups\/[^/]+\/Users\/?$/, 'GET, POST'],
  [/^\/api\/scim\/v2\/groups\/[^/]+\/Users\/[^/]+$/, 'GET, PATCH, DELETE'],
];

const scim: FastifyPluginAsync = async (app) => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(SCIM_CONTENT_TYPE, { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0) return done(null, undefined);
    return parseJson(request, text, done);
  });

  // SCIM bodies are JSON (RFC 7644 §3.1): forms and text, which the REST API's parsers would read, are refused.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined) return done();
    const type = (request.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
    if (type === SCIM_CONTENT_TYPE || type === 'application/json') return done();
    done(scimError(415, `Content-Type must be ${SCIM_CONTENT_TYPE} or application/json`));
  });

  // Fastify appends a charset to string bodies; SCIM's media type is sent bare (RFC 7644 §8.1,
  // JSON is UTF-8 by definition), as the JSON API's is (request-defaults.ts).
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith(`${SCIM_CONTENT_TYPE};`)) reply.header('content-type', SCIM_CONTENT_TYPE);
    done(null, payload);
  });

  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    let status: number;
    let body;
    let headers: Record<string, string> = {};
    if (error instanceof ApiError) {
      status = error.statusCode;
      headers = error.headers;
      const b = error.body as { message?: unknown; error?: unknown };
      body = isScimErrorBody(error.body) ? error.body : scimErrorBody(status, String(b?.message ?? b?.error ?? error.message));
    } else {
      status = (error as FastifyError).statusCode ?? 500;
      // The JSON parser's failures, secure-json-parse's prototype poisoning checks included.
      if (JSON_ERRORS.has((error as FastifyError).code)) body = invalidSyntax('Request body is not valid JSON').body;
      else if (status >= 400 && status < 500) body = scimErrorBody(status, error.message);
      else status = 500;
    }
    if (status >= 500) {
      request.log.error({ err: error }, 'unexpected error');
      body = scimErrorBody(500, 'Internal Server Error');
    }
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    return reply.code(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
  });

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?', 1)[0];
    const allow = ALLOWED.find(([re]) => re.test(path))?.[1];
    const error = allow ? scimError(405, `${request.method} is not allowed here`, undefined, { allow }) : scimError(404, 'Resource not found');
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    return reply.code(error.statusCode).type(SCIM_CONTENT_TYPE).send(JSON.stringify(error.body));
  });

  await app.register(users, { prefix: '/groups/:group_path' });
};

export default scim;
