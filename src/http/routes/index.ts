/**
 * The route table: every resource kiln serves, in one place, read top to bottom. Each area is one
 * Fastify plugin; its file lists its routes with their guards.
 */
import type { FastifyInstance } from 'fastify';
import { health, version } from './meta.ts';
import users from './users.ts';

export async function registerRoutes(app: FastifyInstance): Promise<void> {
  await app.register(health);
  await app.register(async (api) => {
    await api.register(version);
    await api.register(users);
  }, { prefix: '/api/v4' });
}
