import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

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

  it('serves Prometheus metrics', async () => {
    const res = await t.request({ url: '/-/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /kiln_http_requests_total/);
  });
});
