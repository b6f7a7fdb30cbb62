/**
 * Requests with NUL in them, on routes without declared parameters (sign-in and profile pages,
 * OAuth, git's smart HTTP): there is no valid reason for a NUL in a path or a parameter, and
 * PostgreSQL cannot store or compare one, so such a request is refused with 400 before a handler
 * sees it — as the Service's Gitlab::Middleware::HandleNullBytes does for every request. Routes
 * with declared parameters get the finer answers of params.ts (404 for a path segment, 400
 * "<param> is invalid").
 */
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

const refuseNul: preValidationHookHandler = (request, _reply, done) => {
  const path = request.url.split('?', 1)[0];
  let decodedPath: string;
  try {
    decodedPath = decodeURIComponent(path);
  } catch {
    decodedPath = path;
  }
  // As the Service's middleware reads them (Rack params): the path, the query and a form body. A
  // JSON body is the route's own to judge (GraphQL answers NUL in its own error shape).
  const type = String(request.headers['content-type'] ?? '');
  const form = type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
  if (!isStorableText(decodedPath) || unstorable(request.query) || unstorable(request.params) || (form && unstorable(request.body))) {
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
