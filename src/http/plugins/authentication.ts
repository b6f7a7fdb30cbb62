/** Runs `authenticate` for every API route (pages and meta routes say `config.web`). */
import fp from 'fastify-plugin';
import fastifyCookie from '@fastify/cookie';
import { authenticate } from '../auth/authenticate.ts';

export default fp(async (app) => {
  await app.register(fastifyCookie);
  app.decorateRequest('caller', null);
  app.addHook('preValidation', async (request, reply) => {
    if (request.routeOptions.config.web || request.is404) return;
    try {
      await authenticate(request);
    } catch (err) {
      // A refused credential counts against the caller's IP, as an anonymous request would
      // (rate-limit.ts); past that budget the answer is 429, so guessing tokens is throttled.
      await request.server.limitRefusedCredential?.(request, reply);
      throw err;
    }
  });
}, { name: 'authentication' });
