/**
 * /api/v3: gone since the Service's 11.0, except GET /api/v3/user, which OAuth client libraries
 * still call to learn who signed in (reference §6.2, §11). Everything else answers 410.
 */
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../errors.ts';
import { currentUserRoute } from '../users/users.ts';

const apiV3: FastifyPluginAsync = async (app) => {
  currentUserRoute(app, false);
  app.all('/*', { config: { web: true }, schema: { hide: true } }, async () => {
    throw new ApiError(410, { error: 'API V3 is no longer supported. Use API V4 instead.' });
  });
};

export default apiV3;
