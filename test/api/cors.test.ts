/**
 * CORS on /api/* as the Service's rack-cors rules answer (issue 35, item 10): preflights from any
 * origin before authentication, `Access-Control-Allow-Origin: *` without credentials (kiln's own
 * origin echoed with them), every method, any header, the pagination headers exposed, and
 * `Vary: Origin` on every API answer. test/clients/browser-cors.test.ts runs the same in Chromium.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

const EXPOSE = 'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ORIGIN = 'https://app.example.org';

describe('CORS on the API', () => {
  let t: TestApp;

  before(async () => {
    // Rate limits on (the last test spends the per-IP budget): a preflight is answered before them.
    t = await startTestApp({ KILN_RATE_LIMIT_PER_IP: '2', KILN_RATE_LIMIT_PER_USER: '0' });
  });
  after(async () => { await t?.close(); });

  const preflight = (url: string, method: string, headers: Record<string, string> = {}) => t.request({
    method: 'OPTIONS', url, headers: { origin: ORIGIN, 'access-control-request-method': method, ...headers },
  });

  it('answers a preflight from any origin for any method and headers, before authentication', async () => {
    const res = await preflight('/api/v4/projects', 'GET', { 'access-control-request-headers': 'private-token, content-type' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-methods'], METHODS);
    assert.equal(res.headers['access-control-allow-headers'], 'private-token, content-type');
    assert.equal(res.headers['access-control-expose-headers'], EXPOSE);
    assert.equal(res.headers['access-control-max-age'], '7200');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    // Every path under /api, known or not, and every method rack-cors knows.
    for (const [url, method] of [['/api/v4/projects/1/members/all', 'delete'], ['/api/v4/nowhere', 'PATCH'], ['/api/graphql', 'POST']]) {
      const other = await preflight(url, method);
      assert.deepEqual([other.statusCode, other.headers['access-control-allow-origin']], [200, '*'], `${method} ${url}`);
    }
  });

  it('answers a preflight for a method it does not know without CORS headers', async () => {
    const res = await preflight('/api/v4/projects', 'TRACE');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  });

  it('adds the headers to every API answer for a request with an Origin, errors too', async () => {
    const res = await t.request({ url: '/api/v4/projects?per_page=1', token: ROOT_TOKEN, headers: { origin: ORIGIN } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-expose-headers'], EXPOSE);
    assert.equal(res.headers['access-control-allow-methods'], METHODS);
    assert.equal(res.headers['access-control-max-age'], '7200');
    assert.equal(res.headers.vary, 'Origin');
    assert.ok(res.headers['x-total'] !== undefined);
    const unauthorized = await t.request({ url: '/api/v4/user', headers: { origin: ORIGIN } });
    assert.deepEqual([unauthorized.statusCode, unauthorized.headers['access-control-allow-origin']], [401, '*']);
    const unknown = await t.request({ method: 'POST', url: '/api/v4/version', headers: { origin: ORIGIN } });
    assert.deepEqual([unknown.statusCode, unknown.headers['access-control-allow-origin']], [404, '*']);
    // OPTIONS without Access-Control-Request-Method is no preflight: the API's own answer, with the headers.
    const options = await t.request({ method: 'OPTIONS', url: '/api/v4/version', headers: { origin: ORIGIN } });
    assert.deepEqual(
      [options.statusCode, options.headers.allow, options.headers['access-control-allow-origin']], [204, 'OPTIONS, GET, HEAD', '*'],
    );
  });

  it('echoes kiln\'s own origin with credentials, as the Service\'s first rule does', async () => {
    const own = await t.request({ url: '/api/v4/version', token: ROOT_TOKEN, headers: { origin: 'http://kiln.test' } });
    assert.equal(own.headers['access-control-allow-origin'], 'http://kiln.test');
    assert.equal(own.headers['access-control-allow-credentials'], 'true');
    const pre = await preflight('/api/v4/version', 'GET', { origin: 'http://kiln.test' });
    assert.equal(pre.headers['access-control-allow-origin'], 'http://kiln.test');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
  });

  it('says Vary: Origin on API answers without an Origin, and adds nothing outside /api', async () => {
    const plain = await t.request({ url: '/api/v4/version', token: ROOT_TOKEN });
    assert.equal(plain.headers.vary, 'Origin');
    assert.equal(plain.headers['access-control-allow-origin'], undefined);
    const page = await t.request({ url: '/users/sign_in', headers: { origin: ORIGIN } });
    assert.equal(page.headers['access-control-allow-origin'], undefined);
    assert.equal(page.headers.vary, undefined);
    const apiLike = await t.request({ url: '/apiary', headers: { origin: ORIGIN } });
    assert.equal(apiLike.headers['access-control-allow-origin'], undefined);
  });

  it('answers preflights of a client past its rate limit (Rack::Cors comes before Rack::Attack)', async () => {
    let status = 0;
    for (let i = 0; i < 3 && status !== 429; i += 1) {
      status = (await t.request({ url: '/api/v4/version', headers: { origin: ORIGIN } })).statusCode;
    }
    assert.equal(status, 429, 'the per-IP budget is spent');
    const res = await preflight('/api/v4/version', 'GET');
    assert.deepEqual([res.statusCode, res.headers['access-control-allow-origin']], [200, '*']);
  });
});
