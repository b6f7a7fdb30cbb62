/**
 * The one place a page gets its broadcast messages (web/broadcast.ts; issue 33: "shown while
 * active", on every page). The Service renders them in each of its layouts, the sign-in and
 * sign-up one (layouts/devise) as much as the application's, so kiln puts them on every HTML page
 * it serves: the router's pages, sign-in, sign-up, /profile/applications, OAuth's consent and
 * their error and message pages alike.
 *
 * `pageBroadcasts(scope)` wraps the handler of every route registered in that scope after it (an
 * `onRoute` hook, as http/plugins/running-handlers.ts counts handlers) so that it runs with the
 * page's broadcast context, which frame() reads: a new page in the scope needs nothing to show
 * them. The scopes are the web interface's (web/index.ts) and OAuth's pages' (oauth/index.ts,
 * whose JSON endpoints stay outside); a route of a page scope that never answers a page (the
 * static files) says `config.page: false` and skips the lookup. The router answers pages for
 * unmatched paths outside any route; it calls the scope's `run` itself.
 *
 * The cost per request stays the router's: the messages are read and rendered once per write
 * epoch, the flag asked only while a targeted message exists, no session read (a signed-out
 * visitor and a page of no project or group have no role: only the router sets one).
 */
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { createMarkdownRenderer, type MarkdownRenderer } from '../domain/markdown/render-pool.ts';
import { broadcastContext, loadBroadcasts, withBroadcasts } from './broadcast.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False for a route of a page scope that never answers a page (web/page-broadcasts.ts). */
    page?: boolean;
  }
}

export interface PageBroadcasts {
  /** The renderer of the messages' Markdown, for the scope's pages to share. */
  markdown: MarkdownRenderer;
  /** Runs `fn` (a page's handler) with the broadcast messages the page at `request`'s path may show. */
  run<T>(request: FastifyRequest, fn: () => T): Promise<Awaited<T>>;
}

/** Gives every page route registered in `scope` from now on its broadcast messages. */
export function pageBroadcasts(scope: FastifyInstance): PageBroadcasts {
  const ctx = scope.kiln;
  const ownHost = new URL(ctx.config.externalUrl).host;
  const markdown = createMarkdownRenderer();
  scope.addHook('onClose', () => markdown.close());
  async function run<T>(request: FastifyRequest, fn: () => T): Promise<Awaited<T>> {
    const all = await loadBroadcasts(ctx.db, markdown, ownHost);
    const context = await broadcastContext(ctx.db, all, request.url.split('?', 1)[0]!, request.cookies ?? {});
    return await withBroadcasts(context, fn);
  }
  scope.addHook('onRoute', (route) => {
    if (route.config?.page === false) return;
    const handler = route.handler as (...args: Parameters<RouteHandlerMethod>) => unknown;
    route.handler = function withBroadcastMessages(this: ThisParameterType<RouteHandlerMethod>, request, reply) {
      // Counted from here, so that shutdown waits for the read of the messages too (running-handlers.ts).
      return scope.runningHandlers.track(run(request, () => handler.call(this, request, reply)));
    } as RouteHandlerMethod;
  });
  return { markdown, run };
}
