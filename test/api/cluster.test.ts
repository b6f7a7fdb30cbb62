/**
 * Several server processes of one instance (README, Configuration: KILN_REDIS_URL): a user's rate
 * budget is shared through Redis, and a change made through one process is seen by the others on
 * their next requests: a revoked token, a blocked user, an edited profile, a new row in the totals.
 * Without Redis the other processes would go on answering from their caches for seconds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_TOKEN, startPeerApp, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { joinCluster } from '../../src/cluster/cluster.ts';
import { ConfigError } from '../../src/config/load.ts';
import { WriteEpoch } from '../../src/db/write-epoch.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Invalidations travel through Redis pub/sub, so the other process hears of a change a moment
 * after the writer answered: poll for at most half a second, well inside the caches' lifetimes
 * (2 s for rows, 5 s for credentials), so only an invalidation can make the check pass.
 */
async function soon(what: string, check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 500;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(10);
  }
  assert.fail(`${what}: the other process still answered from its cache`);
}

/** Two server processes of one fresh instance, sharing its database and Redis. */
function twoProcesses(env: Record<string, string>): { a: () => TestApp; b: () => TestApp } {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await startTestApp({ KILN_REDIS_URL: REDIS_URL, ...env });
    b = await startPeerApp(a);
  });
  after(async () => {
    await b.close();
    await a.close();
  });
  return { a: () => a, b: () => b };
}

describe('rate budgets shared by the processes of an instance', () => {
  const p = twoProcesses({ KILN_RATE_LIMIT_PER_USER: '6' });

  it('holds a user to one budget across processes', async () => {
    const a = p.a();
    const b = p.b();
    const token = await createToken(a.db, await createUser(a.db));
    for (let i = 0; i < 3; i++) {
      assert.equal((await a.request({ url: '/api/v4/user', token })).statusCode, 200, `on a, request ${i + 1}`);
      const res = await b.request({ url: '/api/v4/user', token });
      assert.equal(res.statusCode, 200, `on b, request ${i + 1}`);
      assert.equal(res.headers['x-ratelimit-remaining'], String(6 - 2 * (i + 1)));
    }
    const refused = await b.request({ url: '/api/v4/user', token });
    assert.deepEqual([refused.statusCode, refused.body, refused.headers['ratelimit-observed']], [429, 'Retry later\n', '7']);
    assert.equal((await a.request({ url: '/api/v4/user', token })).statusCode, 429);
  });
});

describe('changes made through one process, seen by the other', () => {
  const p = twoProcesses({});
  let a: TestApp;
  let b: TestApp;
  before(() => {
    a = p.a();
    b = p.b();
  });

  it('refuses a token on every process once one of them revoked it', async () => {
    const token = await createToken(a.db, await createUser(a.db));
    assert.equal((await b.request({ url: '/api/v4/user', token })).statusCode, 200);
    assert.equal((await b.request({ url: '/api/v4/user', token })).statusCode, 200);
    assert.equal((await a.request({ method: 'DELETE', url: '/api/v4/personal_access_tokens/self', token })).statusCode, 204);
    await soon('revoked token', async () => (await b.request({ url: '/api/v4/user', token })).statusCode === 401);
    assert.equal((await b.request({ url: '/api/v4/user', token })).json<{ error: string }>().error, 'invalid_token');
  });

  // Without waiting: the answer to the revocation left a only once Redis had counted it, and b's
  // next request first hears everything counted before it (http/plugins/read-your-writes.ts).
  it('refuses a token revoked through one process on the very next request to the other', async () => {
    for (let i = 0; i < 5; i++) {
      const token = await createToken(a.db, await createUser(a.db));
      assert.equal((await b.request({ url: '/api/v4/user', token })).statusCode, 200);
      assert.equal((await a.request({ method: 'DELETE', url: '/api/v4/personal_access_tokens/self', token })).statusCode, 204);
      assert.equal((await b.request({ url: '/api/v4/user', token })).statusCode, 401, `token ${i}`);
    }
  });

  it("shows a profile edited through one process on the other's very next read", async () => {
    const user = await createUser(a.db, { name: 'Before' });
    for (let i = 0; i < 5; i++) {
      assert.equal((await b.request({ url: `/api/v4/users/${user.id}` })).json<{ name: string }>().name, i === 0 ? 'Before' : `Edit ${i - 1}`);
      const put = await a.request({ method: 'PUT', url: `/api/v4/users/${user.id}`, token: ROOT_TOKEN, payload: { name: `Edit ${i}` } });
      assert.equal(put.statusCode, 200);
      assert.equal((await b.request({ url: `/api/v4/users/${user.id}` })).json<{ name: string }>().name, `Edit ${i}`, `edit ${i}`);
    }
  });

  it('refuses a blocked user on every process', async () => {
    const user = await createUser(a.db);
    const token = await createToken(a.db, user);
    assert.equal((await b.request({ url: '/api/v4/user', token })).statusCode, 200);
    assert.equal((await a.request({ method: 'POST', url: `/api/v4/users/${user.id}/block`, token: ROOT_TOKEN })).statusCode, 201);
    await soon('blocked user', async () => (await b.request({ url: '/api/v4/user', token })).statusCode === 403);
  });

  // The other process reads anonymously below: an authenticated request may itself write (a
  // token's last use), which would move that process's own write epoch and hide a missed message.
  it("shows a profile edited through one process on the other's next reads", async () => {
    const user = await createUser(a.db, { name: 'Before Edit' });
    const readOnB = async () => (await b.request({ url: `/api/v4/users/${user.id}` })).json<{ name: string }>();
    assert.equal((await readOnB()).name, 'Before Edit');
    assert.equal((await readOnB()).name, 'Before Edit');
    const put = await a.request({ method: 'PUT', url: `/api/v4/users/${user.id}`, token: ROOT_TOKEN, payload: { name: 'After Edit' } });
    assert.equal(put.statusCode, 200);
    await soon('edited profile', async () => (await readOnB()).name === 'After Edit');
  });

  it("counts a project created through one process in the other's totals", async () => {
    const create = async (name: string) => {
      const res = await a.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name, visibility: 'public' } });
      assert.equal(res.statusCode, 201);
    };
    await create('first-public');
    await create('second-public');
    const totalOnB = async () => Number((await b.request({ url: '/api/v4/projects?per_page=1&page=2' })).headers['x-total']);
    assert.equal(await totalOnB(), 2);
    assert.equal(await totalOnB(), 2);
    await create('third-public');
    await soon('total after a new project', async () => (await totalOnB()) === 3);
  });

  it("forgets a list page the other process remembered once one of them wrote (src/http/lists/remembered-pages.ts)", async () => {
    const newestOnB = async () => (await b.request({ url: '/api/v4/users?per_page=1', token: ROOT_TOKEN })).json()[0].username as string;
    const before = await newestOnB();
    // Asked for twice: remembered on b from now on.
    assert.equal(await newestOnB(), before);
    assert.equal(await newestOnB(), before);
    const res = await a.request({ method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN, payload: { username: 'newest-on-a', name: 'Newest', email: 'newest-on-a@example.com', password: 'a-long-enough-password-1' } });
    assert.equal(res.statusCode, 201, res.body);
    await soon('the users list after a new user', async () => (await newestOnB()) === 'newest-on-a');
  });
});

describe('two instances sharing one Redis', () => {
  let a: TestApp;
  let other: TestApp;
  before(async () => {
    a = await startTestApp({ KILN_REDIS_URL: REDIS_URL, KILN_RATE_LIMIT_PER_USER: '2' });
    other = await startTestApp({ KILN_REDIS_URL: REDIS_URL, KILN_RATE_LIMIT_PER_USER: '2' });
  });
  after(async () => {
    await other.close();
    await a.close();
  });

  it('keeps separate budgets for users who share an id', async () => {
    // Both instances are fresh: root is user 1 in each.
    for (let i = 0; i < 2; i++) assert.equal((await a.request({ url: '/api/v4/user', token: ROOT_TOKEN })).statusCode, 200);
    assert.equal((await a.request({ url: '/api/v4/user', token: ROOT_TOKEN })).statusCode, 429);
    assert.equal((await other.request({ url: '/api/v4/user', token: ROOT_TOKEN })).statusCode, 200);
  });
});

describe('an unreachable Redis', () => {
  it('stops start-up with the reason, as a configuration problem', async () => {
    await assert.rejects(
      joinCluster({ redisUrl: 'redis://127.0.0.1:1', secretKeyBase: 'x', writes: new WriteEpoch() }),
      (err: unknown) => err instanceof ConfigError && /KILN_REDIS_URL: cannot reach Redis \(connect ECONNREFUSED 127\.0\.0\.1:1\)/.test(err.message),
    );
  });
});
