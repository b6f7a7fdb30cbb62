/** Health and meta (CONTRACT §3): liveness, readiness, version. */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ping } from '../../../db/database.ts';
import { route } from '../../route.ts';

export const health: FastifyPluginAsync = async (app) => {
  app.get('/-/liveness', { config: { web: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/-/readiness', { config: { web: true }, schema: { hide: true } }, async (_request, reply) => {
    const ok = await ping(app.kiln.db);
    reply.code(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'failed', database: ok ? 'ok' : 'failed' };
  });
};

export const version: FastifyPluginAsync = async (app) => {
  route(app, {
    method: 'GET', url: '/version', auth: 'required', scopes: ['read_user'],
    schema: {
    summary: 'The version of kiln and the commit it runs',
    tags: ['meta'],
    response: { 200: Type.Object({ version: Type.String(), revision: Type.String() }) },
    },
  }, async (_context) => app.kiln.version);
};
