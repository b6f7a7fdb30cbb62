/** Runs `authenticate` for every API route (pages and meta routes say `config.web`). */
import fp from 'fastify-plugin';
import fastifyCookie from '@fastify/cookie';
import { authenticate } from '../auth/authenticate.ts';

export default fp(async (app) => {
  await app.register(fastifyCookie);
  app.decorateRequest('caller', null);
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config.web || request.is404) return;
    await authenticate(request);
  });
}, { name: 'authentication' });
