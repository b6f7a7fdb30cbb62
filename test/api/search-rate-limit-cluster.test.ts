/**
 * The search rate limit across the processes of one instance (KILN_REDIS_URL): a user's searches
 * count against one budget whichever process answers them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startPeerApp, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('search rate limit shared through Redis', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await startTestApp({ KILN_REDIS_URL: REDIS_URL });
    b = await startPeerApp(a);
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('holds a user to one search budget across processes', async () => {
    assert.equal((await a.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 2 } })).statusCode, 200);
    const token = await createToken(a.db, await createUser(a.db));
    assert.equal((await a.request({ url: '/api/v4/users?search=x', token })).statusCode, 200);
    assert.equal((await b.request({ url: '/api/v4/users?search=x', token })).statusCode, 200);
    assert.equal((await a.request({ url: '/api/v4/users?search=x', token })).statusCode, 429);
    assert.equal((await b.request({ url: '/api/v4/users?search=x', token })).statusCode, 429);
  });
});
