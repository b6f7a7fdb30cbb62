/**
 * Prometheus metrics at /-/metrics: request counts and durations by route pattern (never by raw
 * URL, which would carry ids and secrets), plus the process defaults of prom-client.
 */
import fp from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export default fp(async (app) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'kiln_http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers: [registry],
  });
  const duration = new Histogram({
    name: 'kiln_http_request_duration_seconds', help: 'Time to answer HTTP requests', labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [registry],
  });

  // Label children are looked up by one string key instead of prom-client hashing a label
  // object on every request.
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(v: number): void }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const timerKey = `${request.method} ${route}`;
    const counterKey = `${timerKey} ${reply.statusCode}`;
    let counter = counters.get(counterKey);
    if (!counter) {
      counter = requests.labels(request.method, route, String(reply.statusCode));
      counters.set(counterKey, counter);
    }
    let timer = timers.get(timerKey);
    if (!timer) {
      timer = duration.labels(request.method, route);
      timers.set(timerKey, timer);
    }
    counter.inc();
    timer.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get('/-/metrics', { config: { auth: 'optional', web: true }, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}, { name: 'metrics' });
