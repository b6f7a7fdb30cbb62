/**
 * Runs `authenticate` for every API route (pages and meta routes say `config.web`). The hook is
 * attached to each route when it is registered, with what the route asks of authentication
 * (mode, job tokens, scopes per method) worked out then, so a request pays for neither a global
 * hook on routes that do not authenticate nor for reading its route's options again.
 *
 * It also keeps the application's credential cache true to the database: every credential event
 * announced through the application's database handle (domain/auth/credential-events.ts), by
 * any interface or background work, drops the cached credentials it concerns, here and, through
 * the cache's broadcast, on the instance's other processes. One listener per application,
 * removed when the application closes.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, preValidationHookHandler } from 'fastify';
import { onCredentialEvent } from '../../domain/auth/credential-events.ts';
import { authenticate, routeAuth } from '../auth/authenticate.ts';
import { addRouteHook, routeMethods } from './route-hooks.ts';

export default fp(async (app) => {
  app.decorateRequest('caller', null);

  const { db, authCache } = app.kiln;
  const stopHearing = onCredentialEvent(db, (event) => authCache.hear(event));
  app.addHook('onClose', async () => stopHearing());

  // A refused credential counts against the caller's IP, as an anonymous request would
  // (rate-limit.ts); past that budget the answer is 429, so guessing tokens is throttled.
  const refuse = (request: FastifyRequest, reply: FastifyReply, err: unknown, done: HookHandlerDoneFunction): void => {
    const limit = request.server.limitRefusedCredential;
    if (!limit) {
      done(err as Error);
      return;
    }
    limit(request, reply).then(() => done(err as Error), done);
  };

  app.addHook('onRoute', (route) => {
    if (route.config?.web) return;
    const auth = routeAuth(route.config ?? {}, routeMethods(route));
    const hook: preValidationHookHandler = (request, reply, done) => {
      let pending: Promise<void> | undefined;
      try {
        pending = authenticate(request, auth);
      } catch (err) {
        refuse(request, reply, err, done);
        return;
      }
      if (pending) pending.then(() => done(), (err: unknown) => refuse(request, reply, err, done));
      else done();
    };
    addRouteHook(route, 'preValidation', hook);
  });
}, { name: 'authentication' });
