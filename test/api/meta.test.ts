import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

/** Every route Fastify serves, read from its route tree: full path and methods. */
function servedRoutes(app: FastifyInstance): { path: string; methods: string[] }[] {
  const routes: { path: string; methods: string[] }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│   |    )*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?\s*$/.exec(line);
    if (!m) continue;
    stack.length = m[1].length / 4;
    stack.push(m[2]);
    if (m[3]) routes.push({ path: stack.join(''), methods: m[3].split(', ') });
  }
  return routes;
}

/** `/users/:id(^\\d+$)/keys/:key_id` and `/users/{id}/keys/{key_id}` both become `/users/{}/keys/{}`. */
// A position where routes name their parameter differently (`:issue_iid` for issues, `:noteable_id`
// for their notes, as the Service names them) prints as `:a|:b` in the route tree: one position.
const shape = (path: string) => path.replace(/:[A-Za-z0-9_]+(\([^)]*\))?|\{[^}]+\}/g, '{}').replace(/\{\}(\|\{\})+/g, '{}');

describe('health and meta', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers liveness and readiness', async () => {
    const live = await t.request({ url: '/-/liveness' });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: 'ok' });
    const ready = await t.request({ url: '/-/readiness' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().status, 'ok');
  });

  it('requires authentication for the version and answers it', async () => {
    assert.equal((await t.request({ url: '/api/v4/version' })).statusCode, 401);
    const res = await t.request({ url: '/api/v4/version', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), { version: '15.2.0', revision: 'test' });
  });

  it('serves the OpenAPI description of its routes', async () => {
    const res = await t.request({ url: '/api/v4/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/api/v4/users/{id}']);
    assert.ok(doc.paths['/api/v4/version']);
  });

  it('serves Prometheus metrics, counting requests by route pattern', async () => {
    const user = await createUser(t.db);
    await t.request({ url: `/api/v4/users/${user.id}`, token: ROOT_TOKEN });
    await t.request({ url: '/api/v4/users/1', token: ROOT_TOKEN });
    await t.request({ url: '/api/v4/no/such/route' });
    const res = await t.request({ url: '/-/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    const line = (route: string, status: number) => res.body.split('\n')
      .find((l) => l.startsWith(`kiln_http_requests_total{method="GET",route="${route}",status="${status}"}`));
    assert.equal(line('/api/v4/users/:id(^\\\\d+$)', 200)?.split(' ')[1], '2', 'both users counted under one pattern');
    assert.equal(line('unmatched', 404)?.split(' ')[1], '1');
    assert.ok(!res.body.includes(`/api/v4/users/${user.id}"`), 'no raw URL becomes a label');
    assert.match(res.body, /kiln_http_request_duration_seconds_bucket/);
    assert.match(res.body, /process_cpu_seconds_total/);
  });

  it('answers GET /version 401 to anonymous callers, and to a read_user token', async () => {
    const anonymous = await t.request({ url: '/api/v4/version' });
    assert.deepEqual(anonymous.json(), { message: '401 Unauthorized' });
    const user = await createUser(t.db);
    const readUser = await t.request({ url: '/api/v4/version', token: await createToken(t.db, user, { scopes: ['read_user'] }) });
    assert.equal(readUser.statusCode, 200);
    assert.deepEqual(readUser.json(), { version: '15.2.0', revision: 'test' });
    const repoOnly = await t.request({ url: '/api/v4/version', token: await createToken(t.db, user, { scopes: ['read_repository'] }) });
    assert.equal(repoOnly.statusCode, 403);
    assert.equal(repoOnly.json().scope, 'api read_api read_user');
  });

  it('lists every API route and method in the OpenAPI description', async () => {
    const doc = (await t.request({ url: '/api/v4/openapi.json' })).json();
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${shape(path)}`);
    }
    const served = servedRoutes(t.app).filter((r) => r.path.startsWith('/api/v4/') && !r.path.startsWith('/api/v4/docs')
      && r.path !== '/api/v4/openapi.json');
    assert.ok(served.some((r) => r.path === '/api/v4/users/:id(^\\d+$)' && r.methods.includes('GET')), 'the route tree was read');
    // The route tree prints a wildcard route (`…/artifacts/*`) folded into its nearest static
    // node, so a served `…*` is documented when a documented `…{*}` path starts where it does.
    const wildcards = Object.keys(doc.paths).filter((path) => path.endsWith('/{*}')).map(shape);
    const missing = served.flatMap((r) => r.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${shape(r.path)}`))
      .filter((key) => !documented.has(key) && !(key.endsWith('*') && wildcards.some((d) => d.startsWith(key.slice(key.indexOf(' ') + 1, -1)))));
    assert.deepEqual(missing, []);
    assert.ok(documented.has('GET /api/v4/user'));
    assert.equal(doc.paths['/api/v4/version'].get.responses['200'].content['application/json'].schema.required.sort().join(), 'revision,version');
  });
});

describe('readiness without a database', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers 503 once the database stops answering, while liveness stays 200', async () => {
    assert.equal((await t.request({ url: '/-/readiness' })).statusCode, 200);
    await t.db.destroy();
    const res = await t.request({ url: '/-/readiness' });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { status: 'failed', database: 'failed' });
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal((await t.request({ url: '/-/liveness' })).statusCode, 200);
  });
});

describe('API v3', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers 410 for everything but GET /api/v3/user, which still serves the current user', async () => {
    const gone = await t.request({ url: '/api/v3/projects', token: ROOT_TOKEN });
    assert.equal(gone.statusCode, 410);
    assert.deepEqual(gone.json(), { error: 'API V3 is no longer supported. Use API V4 instead.' });
    const post = await t.request({ method: 'POST', url: '/api/v3/users', token: ROOT_TOKEN });
    assert.equal(post.statusCode, 410);
    const user = await t.request({ url: '/api/v3/user', token: ROOT_TOKEN });
    assert.equal(user.statusCode, 200);
    assert.equal(user.json().username, 'root');
    assert.equal((await t.request({ url: '/api/v3/user' })).statusCode, 401);
  });
});
