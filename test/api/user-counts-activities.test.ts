import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { sixMonthsAgo } from '../../src/http/routes/users/activities.ts';

describe('user counts', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('requires authentication', async () => {
    const res = await t.request({ url: '/api/v4/user_counts' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  });

  it('answers the counts, all zero while kiln has no issues, merge requests or to-dos', async () => {
    const user = await createUser(t.db);
    const res = await t.request({ url: '/api/v4/user_counts', token: await createToken(t.db, user) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"merge_requests":0,"assigned_issues":0,"assigned_merge_requests":0,"review_requested_merge_requests":0,"todos":0}');
  });

  it('is not readable with a read_user token (the Service adds no read_user scope)', async () => {
    const user = await createUser(t.db);
    const res = await t.request({ url: '/api/v4/user_counts', token: await createToken(t.db, user, { scopes: ['read_user'] }) });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'insufficient_scope');
  });
});

describe('user activities', () => {
  let t: TestApp;
  const today = new Date().toISOString().slice(0, 10);
  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

  before(async () => {
    t = await startTestApp();
    // Root's own requests record today's activity for it; the others are placed in time.
    await createUser(t.db, { username: 'act-old', last_activity_on: '2000-01-01' });
    await createUser(t.db, { username: 'act-recent', last_activity_on: daysAgo(2) });
    await createUser(t.db, { username: 'act-week', last_activity_on: daysAgo(7) });
    await createUser(t.db, { username: 'act-never' });
  });
  after(async () => { await t.close(); });

  it('is for administrators only', async () => {
    const user = await createUser(t.db);
    const res = await t.request({ url: '/api/v4/user/activities', token: await createToken(t.db, user) });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
    assert.equal((await t.request({ url: '/api/v4/user/activities' })).statusCode, 401);
  });

  it('lists the last six months, oldest activity first', async () => {
    const res = await t.request({ url: '/api/v4/user/activities', token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const body = res.json() as { username: string; last_activity_on: string; last_activity_at: string }[];
    const mine = body.filter((a) => a.username.startsWith('act-') || a.username === 'root');
    assert.deepEqual(mine.map((a) => a.username), ['act-week', 'act-recent', 'root']);
    assert.deepEqual(mine[0], { username: 'act-week', last_activity_on: daysAgo(7), last_activity_at: daysAgo(7) });
    assert.equal(mine[2].last_activity_on, today);
  });

  it('takes `from` as a date and refuses what is not one', async () => {
    const res = await t.request({ url: '/api/v4/user/activities?from=1999-12-31', token: ROOT_TOKEN });
    assert.deepEqual((res.json() as { username: string }[]).map((a) => a.username).slice(0, 1), ['act-old']);
    const recent = await t.request({ url: `/api/v4/user/activities?from=${daysAgo(3)}`, token: ROOT_TOKEN });
    assert.ok(!(recent.json() as { username: string }[]).some((a) => a.username === 'act-week'));
    const bad = await t.request({ url: '/api/v4/user/activities?from=yesterday', token: ROOT_TOKEN });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'from is invalid' });
  });

  it('paginates with the offset headers', async () => {
    const first = await t.request({ url: '/api/v4/user/activities?from=1999-01-01&per_page=2', token: ROOT_TOKEN });
    assert.equal(first.statusCode, 200);
    assert.equal(first.json().length, 2);
    // The four placed users, root, and the user of the first test (active today through it).
    assert.equal(first.headers['x-total'], '5');
    assert.equal(first.headers['x-next-page'], '2');
    assert.match(String(first.headers.link), /rel="next"/);
    const second = await t.request({ url: '/api/v4/user/activities?from=1999-01-01&per_page=2&page=2', token: ROOT_TOKEN });
    assert.deepEqual((second.json() as { username: string }[]).map((a) => a.username), ['act-recent', 'root']);
  });

  it('counts six calendar months back', () => {
    assert.equal(sixMonthsAgo(new Date('2026-08-31T12:00:00Z')).toISOString(), '2026-02-28T12:00:00.000Z');
    assert.equal(sixMonthsAgo(new Date('2026-03-15T00:00:00Z')).toISOString(), '2025-09-15T00:00:00.000Z');
  });
});
