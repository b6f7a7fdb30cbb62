/**
 * Rate limits (spec, Errors: 429; CONTRACT §2): a budget a minute per IP for anonymous callers
 * and per user for authenticated ones (KILN_RATE_LIMIT_*, the defaults of the throttle settings),
 * answered as the Service's Rack::Attack answers: text/plain `Retry later`, RateLimit-* headers
 * and Retry-After.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

/** The Service's Rack::Attack answer: text/plain `Retry later`, RateLimit-* headers and Retry-After. */
function assertLimited(res: { statusCode: number; headers: Record<string, unknown>; body: string }, name?: string): void {
  assert.equal(res.statusCode, 429);
  assert.equal(res.body, 'Retry later\n');
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(res.headers['retry-after'])}`);
  if (name) assert.equal(res.headers['ratelimit-name'], name);
  assert.equal(res.headers['ratelimit-remaining'], '0');
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(Math.abs(reset - (Date.now() / 1000 + retryAfter)) <= 2, `RateLimit-Reset ${reset}`);
  assert.equal(res.headers['ratelimit-resettime'], new Date(reset * 1000).toUTCString());
}

describe('rate limits', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_RATE_LIMIT_PER_IP: '3', KILN_RATE_LIMIT_PER_USER: '5' }); });
  after(async () => { await t.close(); });

  const anonymous = (ip: string) => t.request({ url: '/api/v4/users/1', remoteAddress: ip });

  it('lets an anonymous IP make its budget of requests, then answers 429 with Retry-After', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await anonymous('10.0.0.1');
      assert.equal(res.statusCode, 200, `request ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '3');
      assert.equal(res.headers['x-ratelimit-remaining'], String(3 - i));
    }
    const limited = await anonymous('10.0.0.1');
    assertLimited(limited, 'throttle_unauthenticated_api');
    assert.deepEqual([limited.headers['ratelimit-limit'], limited.headers['ratelimit-observed']], ['3', '4']);
    assertLimited(await anonymous('10.0.0.1'));
  });

  it('keeps a separate budget for each IP', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await anonymous('10.0.0.2')).statusCode, 200);
    assertLimited(await anonymous('10.0.0.2'));
    assert.equal((await anonymous('10.0.0.3')).statusCode, 200);
  });

  it('does not hold an authenticated user to the budget of their IP', async () => {
    for (let i = 0; i < 3; i++) await anonymous('10.0.0.4');
    assertLimited(await anonymous('10.0.0.4'));
    const token = await createToken(t.db, await createUser(t.db));
    const res = await t.request({ url: '/api/v4/users/1', token, remoteAddress: '10.0.0.4' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-ratelimit-limit'], '5');
  });

  it('counts refused credentials against the IP, then answers 429 instead of 401', async () => {
    const ip = '10.2.0.1';
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ url: '/api/v4/user', headers: { 'private-token': `guess-${i}-000000000000` }, remoteAddress: ip });
      assert.equal(res.statusCode, 401, `guess ${i + 1}`);
      assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    }
    assertLimited(await t.request({ url: '/api/v4/user', headers: { 'private-token': 'guess-4-000000000000' }, remoteAddress: ip }));
    const blocked = await createToken(t.db, await createUser(t.db, { state: 'blocked' }));
    assertLimited(await t.request({ url: '/api/v4/user', token: blocked, remoteAddress: ip }));
    assertLimited(await anonymous(ip));
    const token = await createToken(t.db, await createUser(t.db));
    assert.equal((await t.request({ url: '/api/v4/user', token, remoteAddress: ip })).statusCode, 200, 'a valid credential has its own budget');
  });

  it('counts requests with invalid parameters', async () => {
    const ip = '10.3.0.1';
    for (let i = 0; i < 3; i++) assert.equal((await t.request({ url: '/api/v4/users/1?with_custom_attributes=maybe', remoteAddress: ip })).statusCode, 400);
    assertLimited(await t.request({ url: '/api/v4/users/1?with_custom_attributes=maybe', remoteAddress: ip }));
  });

  it('keys the user budget by user, across addresses and tokens', async () => {
    const alice = await createUser(t.db);
    const bob = await createUser(t.db);
    const aliceTokens = [await createToken(t.db, alice), await createToken(t.db, alice)];
    for (let i = 0; i < 5; i++) {
      const res = await t.request({ url: '/api/v4/user', token: aliceTokens[i % 2], remoteAddress: `10.1.0.${i}` });
      assert.equal(res.statusCode, 200, `request ${i + 1}`);
    }
    assertLimited(await t.request({ url: '/api/v4/user', token: aliceTokens[0], remoteAddress: '10.1.0.99' }));
    const bobs = await t.request({ url: '/api/v4/user', token: await createToken(t.db, bob), remoteAddress: '10.1.0.0' });
    assert.equal(bobs.statusCode, 200, 'another user has a budget of their own');
    assert.equal(bobs.json().id, bob.id);
  });
});

describe('rate limits as application settings', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_RATE_LIMIT_PER_IP: '3', KILN_RATE_LIMIT_PER_USER: '5' }); });
  after(async () => { await t.close(); });

  it('answers KILN_RATE_LIMIT_* as the defaults of the throttle settings', async () => {
    const r = await t.request({ url: '/api/v4/application/settings', token: ROOT_TOKEN });
    const s = r.json();
    assert.deepEqual(
      [s.throttle_authenticated_api_enabled, s.throttle_authenticated_api_requests_per_period, s.throttle_authenticated_api_period_in_seconds],
      [true, 5, 60],
    );
    assert.deepEqual(
      [s.throttle_unauthenticated_api_enabled, s.throttle_unauthenticated_api_requests_per_period, s.throttle_unauthenticated_web_requests_per_period],
      [true, 3, 3],
    );
  });
});
