/**
 * The request throttles as application settings (issue 35, item 8): an administrator turns the
 * Service's `throttle_authenticated_api_*`, `throttle_unauthenticated_api_*` and web throttles on
 * and off at run time, as python-gitlab's test_rate_limits does, and a throttled request gets the
 * Service's Rack::Attack answer (text/plain, rate_limiting_response_text, RateLimit-* headers).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('throttle settings', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const settings = (payload: object) => t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload, remoteAddress: '10.9.9.9' });

  it('holds each user to throttle_authenticated_api_* and lets them go on after the period', async () => {
    const set = await settings({
      throttle_authenticated_api_enabled: true, throttle_authenticated_api_requests_per_period: 2, throttle_authenticated_api_period_in_seconds: 2,
    });
    assert.equal(set.statusCode, 200, set.body);
    const alice = await createToken(t.db, await createUser(t.db));
    const bob = await createToken(t.db, await createUser(t.db));
    for (let i = 0; i < 2; i++) assert.equal((await t.request({ url: '/api/v4/user', token: alice })).statusCode, 200, `request ${i + 1}`);
    const limited = await t.request({ url: '/api/v4/user', token: alice });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.body, 'Retry later\n');
    assert.match(String(limited.headers['content-type']), /^text\/plain/);
    assert.equal(limited.headers['ratelimit-name'], 'throttle_authenticated_api');
    // The limit as requests a minute, rounded up (Gitlab::RackAttack.throttled_response_headers).
    assert.equal(limited.headers['ratelimit-limit'], '60');
    assert.equal(limited.headers['ratelimit-observed'], '3');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.equal((await t.request({ url: '/api/v4/user', token: bob })).statusCode, 200, 'another user has a budget of their own');
    // Anonymous requests are not this throttle's.
    assert.equal((await t.request({ url: '/api/v4/users/1' })).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    assert.equal((await t.request({ url: '/api/v4/user', token: alice })).statusCode, 200, 'a new period');
  });

  it('answers rate_limiting_response_text, and stops throttling once the setting is off', async () => {
    await settings({ rate_limiting_response_text: 'Slow down', throttle_authenticated_api_requests_per_period: 1, throttle_authenticated_api_period_in_seconds: 60 });
    const carol = await createToken(t.db, await createUser(t.db));
    assert.equal((await t.request({ url: '/api/v4/user', token: carol })).statusCode, 200);
    const limited = await t.request({ url: '/api/v4/user', token: carol });
    assert.deepEqual([limited.statusCode, limited.body], [429, 'Slow down\n']);
    await settings({ throttle_authenticated_api_enabled: false, rate_limiting_response_text: '' });
    for (let i = 0; i < 5; i++) assert.equal((await t.request({ url: '/api/v4/user', token: carol })).statusCode, 200);
  });

  it('holds callers without credentials to throttle_unauthenticated_api_* per IP, and pages to the web throttle', async () => {
    await settings({
      throttle_unauthenticated_api_enabled: true, throttle_unauthenticated_api_requests_per_period: 2, throttle_unauthenticated_api_period_in_seconds: 60,
      throttle_unauthenticated_web_enabled: true, throttle_unauthenticated_web_requests_per_period: 1, throttle_unauthenticated_web_period_in_seconds: 60,
    });
    const api = () => t.request({ url: '/api/v4/users/1', remoteAddress: '10.7.0.1' });
    assert.equal((await api()).statusCode, 200);
    assert.equal((await api()).statusCode, 200);
    const limited = await api();
    assert.deepEqual([limited.statusCode, limited.headers['ratelimit-name']], [429, 'throttle_unauthenticated_api']);
    assert.equal((await t.request({ url: '/api/v4/users/1', remoteAddress: '10.7.0.2' })).statusCode, 200, 'another address');
    // A signed-in user is not held to their address's budget.
    assert.equal((await t.request({ url: '/api/v4/user', token: await createToken(t.db, await createUser(t.db)), remoteAddress: '10.7.0.1' })).statusCode, 200);

    // Pages count apart from the API, against throttle_unauthenticated_* (throttle_unauthenticated_web_*).
    const page = () => t.request({ url: '/users/sign_in', remoteAddress: '10.7.0.3' });
    assert.equal((await page()).statusCode, 200);
    const web = await page();
    assert.deepEqual([web.statusCode, web.headers['ratelimit-name'], web.body], [429, 'throttle_unauthenticated_web', 'Retry later\n']);
    assert.equal((await t.request({ url: '/api/v4/users/1', remoteAddress: '10.7.0.3' })).statusCode, 200, 'the API budget is its own');
    // Health checks are never throttled.
    for (let i = 0; i < 3; i++) assert.notEqual((await t.request({ url: '/-/liveness', remoteAddress: '10.7.0.3' })).statusCode, 429);
    await settings({ throttle_unauthenticated_api_enabled: false, throttle_unauthenticated_web_enabled: false });
    assert.equal((await api()).statusCode, 200);
  });
});
