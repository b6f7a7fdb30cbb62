/**
 * Prometheus metrics at /-/metrics: request counts and durations by route pattern (never by raw
 * URL, which would carry ids and secrets), plus the process defaults of prom-client.
 *
 * The HTTP series are kept here rather than in prom-client: each route gets its counters when it
 * is registered and a response adds to them directly, where a labelled prom-client child hashes
 * its label set on every call. They are written in the text exposition format on scrape.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { addRouteHook, routeMethods } from './route-hooks.ts';

const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

/** Label values escaped as the exposition format asks: backslash, double quote, newline. */
const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

class RouteSeries {
  readonly labels: string;
  readonly byStatus = new Map<number, number>();
  readonly buckets = new Float64Array(BUCKETS.length);
  count = 0;
  sum = 0;

  constructor(method: string, route: string) {
    this.labels = `method="${label(method)}",route="${label(route)}"`;
  }

  observe(status: number, seconds: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    this.count += 1;
    this.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]) {
        this.buckets[i] += 1;
        break;
      }
    }
  }
}

export class HttpMetrics {
  private readonly series = new Map<string, RouteSeries>();
  // The 404 handler and the error handler may both see one unmatched request.
  private readonly unmatchedReplies = new WeakSet<FastifyReply>();

  seriesFor(method: string, route: string): RouteSeries {
    const key = `${method} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = new RouteSeries(method, route);
      this.series.set(key, s);
    }
    return s;
  }

  /** Requests no route matched (404, 405) count under `unmatched`, once they are answered. */
  observeUnmatched(request: FastifyRequest, reply: FastifyReply): void {
    if (this.unmatchedReplies.has(reply)) return;
    this.unmatchedReplies.add(reply);
    const s = this.seriesFor(request.method, 'unmatched');
    reply.raw.once('finish', () => s.observe(reply.statusCode, reply.elapsedTime / 1000));
  }

  exposition(): string {
    const counts: string[] = [];
    const histogram: string[] = [];
    for (const s of this.series.values()) {
      if (s.count === 0) continue;
      for (const [status, n] of s.byStatus) counts.push(`kiln_http_requests_total{${s.labels},status="${status}"} ${n}`);
      let cumulative = 0;
      for (let i = 0; i < BUCKETS.length; i++) {
        cumulative += s.buckets[i];
        histogram.push(`kiln_http_request_duration_seconds_bucket{le="${BUCKETS[i]}",${s.labels}} ${cumulative}`);
      }
      histogram.push(`kiln_http_request_duration_seconds_bucket{le="+Inf",${s.labels}} ${s.count}`);
      histogram.push(`kiln_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      histogram.push(`kiln_http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    return [
      '# HELP kiln_http_requests_total HTTP requests answered',
      '# TYPE kiln_http_requests_total counter',
      ...counts,
      '# HELP kiln_http_request_duration_seconds Time to answer HTTP requests',
      '# TYPE kiln_http_request_duration_seconds histogram',
      ...histogram,
      '',
    ].join('\n');
  }
}

export default fp(async (app) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const http = new HttpMetrics();
  app.decorate('httpMetrics', http);

  app.addHook('onRoute', (route) => {
    const methods = routeMethods(route);
    const first = http.seriesFor(methods[0], route.url);
    const hook: onResponseHookHandler = (request, reply, done) => {
      // A route with several methods shares the hook; most have one.
      const series = request.method === methods[0] ? first : http.seriesFor(request.method, route.url);
      series.observe(reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    addRouteHook(route, 'onResponse', hook);
  });

  app.get('/-/metrics', { config: { auth: 'optional', web: true }, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return http.exposition() + await registry.metrics();
  });
}, { name: 'metrics' });

declare module 'fastify' {
  interface FastifyInstance {
    httpMetrics?: HttpMetrics;
  }
}
