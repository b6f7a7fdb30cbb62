/**
 * Registers an area's files, each as its own plugin, and stamps every route with the file that
 * declared it (`config.source`, e.g. `users/ssh-keys.ts`) so that `npm run routes` can print
 * each path beside its guard and its file: the one-glance table of an area, read from the
 * routes themselves rather than from a comment that could drift.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route file that declared this route, relative to src/http/routes/. */
    source?: string;
  }
}

export async function registerFiles(api: FastifyInstance, area: string, files: Record<string, FastifyPluginAsync>): Promise<void> {
  for (const [file, plugin] of Object.entries(files)) {
    await api.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, source: `${area}/${file}.ts` };
      });
      await scope.register(plugin);
    });
  }
}
