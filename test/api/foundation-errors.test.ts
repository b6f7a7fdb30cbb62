/**
 * Error shapes and what every response carries (reference §6.2, §6.5; spec, Errors and Limits):
 * unknown routes, wrong methods, 414, malformed bodies, unexpected failures, security headers,
 * request ids, and secrets kept out of the logs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

const LEAK = 'connection to 10.0.0.7 failed with password hunter2';

const failing: FastifyPluginAsync = async (app) => {
  await app.register(async (api) => {
    api.get('/__boom', { config: { auth: 'optional' } }, async () => {
      throw new Error(LEAK);
    });
    api.post('/__echo', { config: { auth: 'optional' } }, async (request) => ({ body: request.body }));
  }, { prefix: '/api/v4' });
};

function assertServiceHeaders(headers: Record<string, unknown>, what: string): void {
  assert.equal(headers['content-type'], 'application/json', what);
  assert.equal(headers['x-frame-options'], 'SAMEORIGIN', what);
  assert.equal(headers['x-content-type-options'], 'nosniff', what);
  assert.match(String(headers['x-request-id']), /^[A-Za-z0-9._-]{1,64}$/, what);
}

describe('errors and response conventions', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_MAX_QUERY_STRING: '300' }, { plugins: [failing] }); });
  after(async () => { await t.close(); });

  it('answers an unknown route 404 {"error":"404 Not Found"} inside the API, and the 404 page outside it', async () => {
    for (const url of ['/api/v4/no-such-thing', '/api/v4/users/1/no-such-thing']) {
      const res = await t.request({ url, token: ROOT_TOKEN });
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { error: '404 Not Found' }, url);
      assertServiceHeaders(res.headers, url);
    }
    // Outside the API a path names a page (a user, group or project): the web interface's 404
    // page when there is none, as the Service's (issue 33).
    const page = await t.request({ url: '/nowhere', token: ROOT_TOKEN });
    assert.equal(page.statusCode, 404);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
  });

  it('answers a non-numeric :id on /users/:id with the route 404, before authentication', async () => {
    for (const id of ['abc', '1x', '-1', '1.5']) {
      const res = await t.request({ url: `/api/v4/users/${id}` });
      assert.equal(res.statusCode, 404, id);
      assert.deepEqual(res.json(), { error: '404 Not Found' }, id);
    }
  });

  it('answers a missing record with the helper\'s 404 User Not Found', async () => {
    const res = await t.request({ url: '/api/v4/users/987654', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
  });

  it('answers a known path with another method 404, as the Service\'s catch-all route does', async () => {
    // lib/api/api.rb ends in `route :any, '*path'` (404): Grape's router reaches it before its 405.
    for (const method of ['POST', 'DELETE', 'PUT', 'PATCH'] as const) {
      const res = await t.request({ method, url: '/api/v4/version', token: ROOT_TOKEN });
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), { error: '404 Not Found' });
      assert.equal(res.headers.allow, undefined);
      assertServiceHeaders(res.headers, method);
    }
  });

  it('answers OPTIONS on a known API path 204 with Allow, as Grape does, and 404 elsewhere', async () => {
    const known = await t.request({ method: 'OPTIONS', url: '/api/v4/version' });
    assert.equal(known.statusCode, 204);
    assert.equal(known.headers.allow, 'OPTIONS, GET, HEAD');
    assert.equal(known.body, '');
    const many = await t.request({ method: 'OPTIONS', url: '/api/v4/projects/1' });
    assert.equal(many.headers.allow, 'OPTIONS, GET, PUT, DELETE, HEAD');
    const unknown = await t.request({ method: 'OPTIONS', url: '/api/v4/nowhere' });
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { error: '404 Not Found' }]);
  });

  it('answers a query string over KILN_MAX_QUERY_STRING with 414', async () => {
    const atLimit = await t.request({ url: `/api/v4/version?x=${'a'.repeat(298)}`, token: ROOT_TOKEN });
    assert.equal(atLimit.statusCode, 200, 'exactly at the limit is accepted');
    const over = await t.request({ url: `/api/v4/version?x=${'a'.repeat(299)}`, token: ROOT_TOKEN });
    assert.equal(over.statusCode, 414);
    assert.deepEqual(over.json(), { message: '414 Request-URI Too Large' });
    assertServiceHeaders(over.headers, '414');
    const anonymous = await t.request({ url: `/nowhere?x=${'a'.repeat(400)}` });
    assert.equal(anonymous.statusCode, 414, 'checked before routing and authentication');
  });

  it('answers malformed JSON with 400 in the Service\'s shape', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/__echo', payload: '{"name": ', headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 400);
    assertServiceHeaders(res.headers, 'malformed JSON');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['message']);
    assert.match(body.message, /^400 Bad request - /);
  });

  it('answers an unsupported body type with 415 in the Service\'s shape', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v4/__echo', payload: '<x/>', headers: { 'content-type': 'application/xml' } });
    assert.equal(res.statusCode, 415);
    assert.deepEqual(res.json(), { message: '415 Unsupported Media Type' });
  });

  it('answers an unexpected failure 500 with nothing leaked', async () => {
    const res = await t.request({ url: '/api/v4/__boom' });
    assert.equal(res.statusCode, 500);
    assert.equal(res.body, '{"message":"500 Internal Server Error"}');
    assertServiceHeaders(res.headers, '500');
    assert.ok(!JSON.stringify(res.headers).includes('hunter2'));
  });

  it('sends exactly application/json, the security headers and a request id on success', async () => {
    const res = await t.request({ url: '/api/v4/user', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    assertServiceHeaders(res.headers, 'GET /user');
    const other = await t.request({ url: '/api/v4/user', token: ROOT_TOKEN });
    assert.notEqual(other.headers['x-request-id'], res.headers['x-request-id'], 'each request has its own id');
  });

  it('sends the same headers on 401, 403 and 404', async () => {
    assertServiceHeaders((await t.request({ url: '/api/v4/user' })).headers, '401');
    const narrow = await createToken(t.db, await createUser(t.db), { scopes: ['read_repository'] });
    const forbidden = await t.request({ url: '/api/v4/user', token: narrow });
    assert.equal(forbidden.statusCode, 403);
    assertServiceHeaders(forbidden.headers, '403');
    const missing = await t.request({ url: '/api/v4/user', token: ROOT_TOKEN, headers: { sudo: 'nobody-here' } });
    assert.equal(missing.statusCode, 404);
    assertServiceHeaders(missing.headers, '404');
  });

  it('keeps a well-formed X-Request-Id from the client and replaces anything else', async () => {
    const kept = await t.request({ url: '/api/v4/version', token: ROOT_TOKEN, headers: { 'x-request-id': 'client-abc.123' } });
    assert.equal(kept.headers['x-request-id'], 'client-abc.123');
    const replaced = await t.request({ url: '/api/v4/version', token: ROOT_TOKEN, headers: { 'x-request-id': 'bad id with spaces' } });
    assert.notEqual(replaced.headers['x-request-id'], 'bad id with spaces');
    assert.match(String(replaced.headers['x-request-id']), /^[A-Za-z0-9._-]+$/);
  });
});

describe('logs and long query strings, on a listening server', () => {
  let t: ListeningTestApp;
  const lines: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));

  before(async () => { t = await startListeningApp({ LOG_LEVEL: 'info' }, { plugins: [failing], logStream: stream }); });
  after(async () => { await t.close(); });

  it('logs each request with its URL, but never a credential', async () => {
    const secret = 'glpat-SECRET-in-the-query-1';
    await t.request({ url: `/api/v4/user?private_token=${ROOT_TOKEN}&per_page=5` });
    await t.request({ url: `/api/v4/user?access_token=${secret}` });
    await t.request({ url: '/api/v4/user', headers: { 'private-token': secret, authorization: `Bearer ${secret}`, cookie: `_service_session=${secret}` } });
    await t.request({ url: `/api/v4/__boom?job_token=${secret}` });
    const encoded = await t.request({ url: `/api/v4/user?private%5Ftoken=${ROOT_TOKEN}` });
    assert.equal(encoded.statusCode, 200, 'qs decodes the name, so this authenticates');
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join('\n');
    assert.ok(!text.includes(ROOT_TOKEN), 'the root token never appears');
    assert.ok(!text.includes(secret), 'no secret appears');
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    assert.equal(requests.length, 5);
    assert.equal(requests[0].url, '/api/v4/user?private_token=[FILTERED]&per_page=5');
    assert.equal(requests[0].status, 200);
    assert.equal(requests[0].user, 1);
    assert.equal(requests[1].url, '/api/v4/user?access_token=[FILTERED]');
    assert.equal(requests[3].status, 500);
    assert.equal(requests[4].url, '/api/v4/user?private%5Ftoken=[FILTERED]');
    assert.ok(lines.some((l) => l.includes(LEAK)), 'the unexpected error itself is logged for the operator');
  });

  it('answers 414 in the Service\'s shape, even past Node\'s default 16 KiB header limit', async () => {
    for (const length of [9_000, 20_000]) {
      const res = await fetch(`${t.url}/api/v4/version?x=${'a'.repeat(length)}`, { headers: { 'private-token': ROOT_TOKEN } });
      assert.equal(res.status, 414, String(length));
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.deepEqual(await res.json(), { message: '414 Request-URI Too Large' });
    }
    const ok = await fetch(`${t.url}/api/v4/version?x=${'a'.repeat(8_000)}`, { headers: { 'private-token': ROOT_TOKEN } });
    assert.equal(ok.status, 200, 'under the default 8 KiB limit');
  });
});
