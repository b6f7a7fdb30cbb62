import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';
import { nowIso } from '../../src/domain/clock.ts';

describe('following users', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
  });
  after(async () => { await t.close(); });

  const follows = (followerId: number) =>
    t.db.selectFrom('user_follows').select('followee_id').where('follower_id', '=', followerId).orderBy('followee_id').execute();

  it('follows a user and answers 201 with the UserBasic', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/follow`, token: aliceToken });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), {
      id: bob.id, username: bob.username, name: bob.name, state: 'active', avatar_url: null, web_url: `http://kiln.test/${bob.username}`,
    });
    assert.deepEqual(await follows(alice.id), [{ followee_id: bob.id }]);
    const profile = await t.request({ url: `/api/v4/users/${bob.id}`, token: aliceToken });
    assert.equal(profile.json().followers, 1);
    assert.equal(profile.json().is_followed, true);
  });

  it('answers 304 with an empty body when already following, or following oneself', async () => {
    const again = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/follow`, token: aliceToken });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const self = await t.request({ method: 'POST', url: `/api/v4/users/${alice.id}/follow`, token: aliceToken });
    assert.equal(self.statusCode, 304);
    assert.deepEqual(await follows(alice.id), [{ followee_id: bob.id }]);
  });

  it('guards follow and unfollow: authentication, unknown and non-numeric ids', async () => {
    const anon = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/follow` });
    assert.equal(anon.statusCode, 401);
    const missing = await t.request({ method: 'POST', url: '/api/v4/users/999999/follow', token: aliceToken });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 User Not Found' });
    const unfollowMissing = await t.request({ method: 'POST', url: '/api/v4/users/999999/unfollow', token: aliceToken });
    assert.equal(unfollowMissing.statusCode, 404);
    const named = await t.request({ method: 'POST', url: `/api/v4/users/${bob.username}/follow`, token: aliceToken });
    assert.equal(named.statusCode, 404);
    assert.deepEqual(named.json(), { error: '404 Not Found' });
    const readOnly = await createToken(t.db, alice, { scopes: ['read_user'] });
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/follow`, token: readOnly })).statusCode, 403);
  });

  it('lists followers and following to signed-in viewers', async () => {
    const followers = await t.request({ url: `/api/v4/users/${bob.id}/followers`, token: bobToken });
    assert.equal(followers.statusCode, 200);
    assert.deepEqual(followers.json().map((u: { id: number }) => u.id), [alice.id]);
    assert.equal(followers.headers['x-total'], '1');
    const following = await t.request({ url: `/api/v4/users/${alice.id}/following`, token: bobToken });
    assert.deepEqual(following.json().map((u: { username: string }) => u.username), [bob.username]);
    const anon = await t.request({ url: `/api/v4/users/${bob.id}/followers` });
    assert.equal(anon.statusCode, 403);
    assert.deepEqual(anon.json(), { message: '403 Forbidden - Not authorized!' });
    const missing = await t.request({ url: '/api/v4/users/999999/following', token: bobToken });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 User Not Found' });
  });

  it('hides the follows of a private profile from other users, not from itself or administrators', async () => {
    const hidden = await createUser(t.db, { private_profile: 1 });
    const hiddenToken = await createToken(t.db, hidden);
    const other = await t.request({ url: `/api/v4/users/${hidden.id}/followers`, token: aliceToken });
    assert.equal(other.statusCode, 404);
    assert.equal((await t.request({ url: `/api/v4/users/${hidden.id}/followers`, token: hiddenToken })).statusCode, 200);
    assert.equal((await t.request({ url: `/api/v4/users/${hidden.id}/following`, token: ROOT_TOKEN })).statusCode, 200);
  });

  it('paginates followers in id order', async () => {
    const star = await createUser(t.db);
    const fans: UserRow[] = [];
    for (let i = 0; i < 5; i += 1) {
      const fan = await createUser(t.db);
      fans.push(fan);
      await t.db.insertInto('user_follows').values({ follower_id: fan.id, followee_id: star.id, created_at: nowIso() }).execute();
    }
    const page1 = await t.request({ url: `/api/v4/users/${star.id}/followers?per_page=2`, token: aliceToken });
    assert.deepEqual(page1.json().map((u: { id: number }) => u.id), fans.slice(0, 2).map((f) => f.id));
    assert.equal(page1.headers['x-total'], '5');
    assert.equal(page1.headers['x-total-pages'], '3');
    assert.match(String(page1.headers.link), new RegExp(`<http://kiln.test/api/v4/users/${star.id}/followers\\?page=2&per_page=2>; rel="next"`));
    const page3 = await t.request({ url: `/api/v4/users/${star.id}/followers?per_page=2&page=3`, token: aliceToken });
    assert.deepEqual(page3.json().map((u: { id: number }) => u.id), [fans[4].id]);
    assert.equal(page3.headers['x-next-page'], '');
  });

  it('unfollows, answering 201 with the UserBasic, then 304', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/unfollow`, token: aliceToken });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().id, bob.id);
    assert.deepEqual(await follows(alice.id), []);
    const again = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/unfollow`, token: aliceToken });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
  });

  it('refuses a follow past the limit of 300 with the model message', async () => {
    const collector = await createUser(t.db);
    const token = await createToken(t.db, collector);
    const target = await createUser(t.db);
    // Each follow needs its own followee (the pair is the key): 300 accounts, followed in one insert.
    const now = nowIso();
    const ids: number[] = [];
    for (let i = 0; i < 300; i += 1) ids.push((await createUser(t.db)).id);
    await t.db.insertInto('user_follows').values(ids.map((id) => ({ follower_id: collector.id, followee_id: id, created_at: now }))).execute();
    const res = await t.request({ method: 'POST', url: `/api/v4/users/${target.id}/follow`, token });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: "You can't follow more than 300 users. To follow more users, unfollow some others." });
    assert.equal((await follows(collector.id)).length, 300);
  });
});
