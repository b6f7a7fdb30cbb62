/**
 * Hooks attached to routes as they are registered (an `onRoute` hook), instead of global hooks
 * that every request runs and that read the route's options back on each call. Fastify copies a
 * GET route's options for its HEAD twin before `onRoute` runs, so hook lists are replaced, never
 * pushed into, or the HEAD route would get each hook twice.
 */
import type { RouteOptions } from 'fastify';

type LifecycleHook = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend' | 'onResponse';

// How many hooks of each kind kiln's plugins have put in front of a route's own hooks so far.
const inserted = new WeakMap<RouteOptions, Partial<Record<LifecycleHook, number>>>();

/**
 * Adds a hook that runs as a global one would: after those kiln's plugins added before it, but
 * before the route's own hooks (a route's `preValidation: adminOnly` must see the caller).
 */
export function addRouteHook(route: RouteOptions, name: LifecycleHook, hook: unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? [...existing] : [existing];
  let counts = inserted.get(route);
  if (!counts) {
    counts = {};
    inserted.set(route, counts);
  }
  const at = counts[name] ?? 0;
  list.splice(at, 0, hook);
  counts[name] = at + 1;
  (route as unknown as Record<string, unknown>)[name] = list;
}

/** The route's HTTP methods, upper case. */
export function routeMethods(route: RouteOptions): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map((m) => String(m).toUpperCase());
}
