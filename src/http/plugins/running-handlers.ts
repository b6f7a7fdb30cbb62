/**
 * Route handlers still running, so that shutdown closes the database only after them
 * (server.ts). Fastify's close waits for open connections, not for handlers: a client that gave
 * up (or an injected request) leaves its handler running after close() resolves, and its next
 * query met a closed pool ("Cannot use a pool after calling end on the pool", a logged 500).
 * Every route's handler is counted from its call until the promise it returns settles.
 */
import fp from 'fastify-plugin';
import type { RouteHandlerMethod } from 'fastify';

export interface RunningHandlers {
  /** How many handlers are running now. */
  count(): number;
  /** Resolves true once none is running, or false after `ms`. */
  settled(ms: number): Promise<boolean>;
  /**
   * Counts `work` as a running handler until it settles: the work a later `onRoute` hook's
   * wrapper does before the counted handler it wraps (web/page-broadcasts.ts reads messages).
   */
  track<T>(work: Promise<T>): Promise<T>;
}

declare module 'fastify' {
  interface FastifyInstance {
    runningHandlers: RunningHandlers;
  }
}

export default fp(async (app) => {
  let running = 0;
  let waiters: (() => void)[] = [];
  const finished = () => {
    running -= 1;
    if (running === 0) {
      for (const wake of waiters) wake();
      waiters = [];
    }
  };

  app.decorate('runningHandlers', {
    count: () => running,
    settled: (ms: number) => {
      if (running === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    track: (work) => {
      running += 1;
      return work.finally(finished);
    },
  });

  app.addHook('onRoute', (route) => {
    const handler = route.handler as (...args: Parameters<RouteHandlerMethod>) => unknown;
    route.handler = function counted(this: ThisParameterType<RouteHandlerMethod>, request, reply) {
      running += 1;
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (err) {
        finished();
        throw err;
      }
      // Handlers answer with a value (some synchronously, for speed) or a promise of one.
      if (result instanceof Promise) return result.finally(finished);
      finished();
      return result;
    } as RouteHandlerMethod;
  });
}, { name: 'running-handlers' });
