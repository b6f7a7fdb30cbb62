/**
 * Requests with NUL in them, on routes without declared parameters (sign-in and profile pages,
 * OAuth, git's smart HTTP): there is no valid reason for a NUL in a path or a parameter, and
 * PostgreSQL cannot store or compare one, so such a request is refused with 400 before a handler
 * sees it — as the Service's Gitlab::Middleware::HandleMalformedStrings does for every request:
 * the path, the parameters (a JSON body's too: Rails reads them into the same params) and HTTP
 * Basic credentials, where a NUL or bytes that are not UTF-8 are refused (issue 35, item 13).
 * Routes with declared parameters get the finer answers of params.ts (404 for a path segment,
 * 400 "<param> is invalid"); routes that say `config.ownErrors` (SCIM, GraphQL) judge their own.
 */
import { isUtf8 } from 'node:buffer';
import fp from 'fastify-plugin';
import type { preValidationHookHandler, RouteOptions } from 'fastify';
import { isStorableText } from '../../db/constraints.ts';
import { badRequest } from '../errors.ts';

/** Nested parameters are looked into this deep (Rails brackets: `a[b][c]`), no deeper. */
const MAX_DEPTH = 4;

function unstorable(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return false;
  if (typeof (value as { pipe?: unknown }).pipe === 'function') return false;
  const values = Array.isArray(value) ? value : Object.values(value);
  return values.some((v) => unstorable(v, depth + 1));
}

/** HTTP Basic credentials that hold a NUL or are not UTF-8 (the Service's credentials_malformed?). */
function malformedCredentials(header: unknown): boolean {
  if (typeof header !== 'string') return false;
  const basic = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!basic) return false;
  const decoded = Buffer.from(basic[1]!, 'base64');
  return !isUtf8(decoded) || decoded.includes(0);
}

const refuseNul: preValidationHookHandler = (request, _reply, done) => {
  const path = request.url.split('?', 1)[0];
  let decodedPath: string;
  try {
    decodedPath = decodeURIComponent(path);
  } catch {
    decodedPath = path;
  }
  // As the Service's middleware reads them (ActionDispatch params): the path, the query and a
  // parsed body, form or JSON (a pack or a raw stream is not parameters), and Basic credentials.
  const type = String(request.headers['content-type'] ?? '');
  const parsed = /^(application\/x-www-form-urlencoded|multipart\/form-data|application\/([\w.-]+\+)?json)\b/i.test(type);
  if (!isStorableText(decodedPath) || unstorable(request.query) || unstorable(request.params) || (parsed && unstorable(request.body))
    || malformedCredentials(request.headers.authorization)) {
    done(badRequest());
    return;
  }
  done();
};

export default fp(async (app) => {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.params || route.config?.ownErrors) return;
    const existing = route.preValidation;
    route.preValidation = [refuseNul, ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing])];
  });
}, { name: 'null-bytes' });
