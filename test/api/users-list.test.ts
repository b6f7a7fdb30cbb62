import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import type { UserRow } from '../../src/db/types.ts';
import { nowIso } from '../../src/domain/clock.ts';

const ids = (res: { json(): unknown }) => (res.json() as { id: number }[]).map((u) => u.id);

describe('GET /users', () => {
  let t: TestApp;
  let alice: UserRow;
  let bob: UserRow;
  let blocked: UserRow;
  let banned: UserRow;
  let external: UserRow;
  let bot: UserRow;
  let support: UserRow;
  let userToken: string;
  let samlProviderId: number;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db, { username: 'alice_w', name: 'Alice Wonder', public_email: 'alice@pub.example' });
    bob = await createUser(t.db, { username: 'Bob.Builder', name: 'Bob Builder', otp_required_for_login: 1 });
    blocked = await createUser(t.db, { username: 'blocky', state: 'blocked' });
    banned = await createUser(t.db, { username: 'banny', state: 'banned' });
    external = await createUser(t.db, { username: 'outsider', external: 1 });
    bot = await createUser(t.db, { username: 'project_1_bot', user_type: 6 });
    support = await createUser(t.db, { username: 'support-bot', user_type: 1 });
    userToken = await createToken(t.db, alice);
    const now = nowIso();
    await t.db.insertInto('identities').values({ user_id: bob.id, provider: 'ldapmain', extern_uid: 'CN=Bob,DC=example', saml_provider_id: null, created_at: now }).execute();
    // A group_saml identity names its group's SAML provider (a foreign key on PostgreSQL).
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'SAML group', path: 'saml-group' } });
    assert.equal(group.statusCode, 201);
    samlProviderId = (await t.db.insertInto('saml_providers').values({ group_id: (group.json() as { id: number }).id, created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow()).id;
    await t.db.insertInto('identities').values({ user_id: alice.id, provider: 'group_saml', extern_uid: 'alice-saml', saml_provider_id: samlProviderId, created_at: now }).execute();
    await t.db.insertInto('user_custom_attributes').values([
      { user_id: alice.id, key: 'team', value: 'red', created_at: now, updated_at: now },
      { user_id: alice.id, key: 'tier', value: 'gold', created_at: now, updated_at: now },
      { user_id: bob.id, key: 'team', value: 'red', created_at: now, updated_at: now },
    ]).execute();
    await t.db.updateTable('users').set({ created_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', alice.id).execute();
  });
  after(async () => { await t.close(); });

  it('refuses anonymous callers without username and lets them look one username up', async () => {
    const res = await t.request({ url: '/api/v4/users' });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Not authorized to access /api/v4/users' });
    const found = await t.request({ url: '/api/v4/users?username=BOB.builder' });
    assert.equal(found.statusCode, 200);
    assert.deepEqual(found.json(), [{
      id: bob.id, username: 'Bob.Builder', name: 'Bob Builder', state: 'active', avatar_url: null, web_url: 'http://kiln.test/Bob.Builder',
    }]);
  });

  it('gives non-administrators UserBasic in id DESC without blocked or banned users', async () => {
    const res = await t.request({ url: '/api/v4/users?per_page=100&order_by=username&sort=asc', token: userToken });
    assert.equal(res.statusCode, 200);
    const list = ids(res);
    assert.deepEqual(list, [...list].sort((a, b) => b - a));
    assert.ok(!list.includes(blocked.id) && !list.includes(banned.id));
    assert.ok(list.includes(alice.id) && list.includes(1));
    assert.deepEqual(Object.keys(res.json()[0]).sort(), ['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
  });

  it('gives administrators UserWithAdmin including every state', async () => {
    const res = await t.request({ url: `/api/v4/users?per_page=100`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 200);
    const list = res.json() as Record<string, unknown>[];
    assert.ok(list.some((u) => u.id === blocked.id));
    const a = list.find((u) => u.id === alice.id)!;
    assert.equal(a.email, alice.email);
    assert.equal(a.is_admin, false);
    assert.equal(typeof a.namespace_id, 'number');
    assert.deepEqual(a.identities, [{ provider: 'group_saml', extern_uid: 'alice-saml', saml_provider_id: samlProviderId }]);
    assert.equal(a.followers, 0);
    assert.equal(a.custom_attributes, undefined);
  });

  it('filters by search on name, username and exact public email', async () => {
    const byName = await t.request({ url: '/api/v4/users?search=wonder', token: userToken });
    assert.deepEqual(ids(byName), [alice.id]);
    const byEmail = await t.request({ url: '/api/v4/users?search=ALICE@pub.example', token: userToken });
    assert.deepEqual(ids(byEmail), [alice.id]);
    const wildcard = await t.request({ url: '/api/v4/users?search=%25', token: userToken });
    assert.deepEqual(ids(wildcard), []);
    const privateEmail = await t.request({ url: `/api/v4/users?search=${bob.email}`, token: userToken });
    assert.deepEqual(ids(privateEmail), []);
    const privateEmailAdmin = await t.request({ url: `/api/v4/users?search=${bob.email}`, token: ROOT_TOKEN });
    assert.deepEqual(ids(privateEmailAdmin), [bob.id]);
  });

  it('filters by active, blocked, external and the exclusions', async () => {
    const q = async (query: string) => ids(await t.request({ url: `/api/v4/users?per_page=100&${query}`, token: ROOT_TOKEN }));
    const active = await q('active=true');
    assert.ok(active.includes(alice.id) && !active.includes(blocked.id) && !active.includes(support.id));
    assert.deepEqual(await q('blocked=true'), [blocked.id]);
    assert.deepEqual(await q('external=true'), [external.id]);
    assert.ok(!(await q('exclude_external=true')).includes(external.id));
    const nonInternal = await q('exclude_internal=true');
    assert.ok(!nonInternal.includes(support.id) && nonInternal.includes(bot.id));
    const noBots = await q('without_project_bots=true');
    assert.ok(!noBots.includes(bot.id) && noBots.includes(support.id));
    assert.deepEqual(await q('admins=true'), [1]);
    assert.deepEqual(await q('two_factor=enabled'), [bob.id]);
    assert.ok(!(await q('two_factor=disabled')).includes(bob.id));
    assert.deepEqual(await q(`saml_provider_id=${samlProviderId}`), [alice.id]);
  });

  it('drops administrator-only parameters for other users', async () => {
    const admins = await t.request({ url: '/api/v4/users?admins=true&per_page=100', token: userToken });
    assert.ok(ids(admins).includes(alice.id));
    const created = await t.request({ url: '/api/v4/users?created_before=2021-01-01T00:00:00Z', token: userToken });
    assert.ok(ids(created).length > 1);
    const attrs = await t.request({ url: '/api/v4/users?custom_attributes[team]=red&with_custom_attributes=true&per_page=100', token: userToken });
    assert.ok(ids(attrs).includes(external.id));
    assert.equal(attrs.json()[0].custom_attributes, undefined);
  });

  it('filters by creation time and custom attributes for administrators', async () => {
    const before2021 = await t.request({ url: '/api/v4/users?created_before=2021-01-01T00:00:00Z', token: ROOT_TOKEN });
    assert.deepEqual(ids(before2021), [alice.id]);
    const after2021 = await t.request({ url: '/api/v4/users?created_after=2021-01-01T00:00:00Z&per_page=100', token: ROOT_TOKEN });
    assert.ok(!ids(after2021).includes(alice.id) && ids(after2021).includes(bob.id));
    const red = await t.request({ url: '/api/v4/users?custom_attributes[team]=red', token: ROOT_TOKEN });
    assert.deepEqual(ids(red), [bob.id, alice.id]);
    const redGold = await t.request({ url: '/api/v4/users?custom_attributes[team]=red&custom_attributes[tier]=gold&with_custom_attributes=true', token: ROOT_TOKEN });
    assert.deepEqual(ids(redGold), [alice.id]);
    assert.deepEqual(redGold.json()[0].custom_attributes, [{ key: 'team', value: 'red' }, { key: 'tier', value: 'gold' }]);
  });

  it('looks up extern_uid with provider for administrators only', async () => {
    const res = await t.request({ url: '/api/v4/users?extern_uid=cn%3Dbob%2Cdc%3Dexample&provider=ldapmain', token: ROOT_TOKEN });
    assert.deepEqual(ids(res), [bob.id]);
    const other = await t.request({ url: '/api/v4/users?extern_uid=x&provider=ldapmain', token: userToken });
    assert.equal(other.statusCode, 403);
    assert.deepEqual(other.json(), { message: '403 Forbidden' });
    const half = await t.request({ url: '/api/v4/users?extern_uid=x', token: ROOT_TOKEN });
    assert.equal(half.statusCode, 400);
    assert.deepEqual(half.json(), { error: 'extern_uid, provider provide all or none of parameters' });
  });

  it('orders for administrators and rejects unknown orders', async () => {
    const byName = await t.request({ url: '/api/v4/users?order_by=username&sort=asc&per_page=100', token: ROOT_TOKEN });
    const names = (byName.json() as { username: string }[]).map((u) => u.username);
    assert.deepEqual(names, [...names].sort());
    const bad = await t.request({ url: '/api/v4/users?order_by=email', token: ROOT_TOKEN });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'order_by does not have a valid value' });
    const asc = await t.request({ url: '/api/v4/users?order_by=created_at&sort=asc&per_page=100', token: ROOT_TOKEN });
    const list = ids(asc);
    assert.deepEqual(list, [...list].sort((a, b) => a - b));
  });

  it('paginates, following Link rel="next" to the end', async () => {
    const all = ids(await t.request({ url: '/api/v4/users?per_page=100', token: ROOT_TOKEN }));
    const seen: number[] = [];
    let url: string | null = '/api/v4/users?per_page=3';
    let pages = 0;
    while (url) {
      const res = await t.request({ url, token: ROOT_TOKEN });
      assert.equal(res.statusCode, 200);
      seen.push(...ids(res));
      pages += 1;
      assert.equal(res.headers['x-total'], String(all.length));
      const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link));
      url = next ? next[1].replace('http://kiln.test', '') : null;
    }
    assert.deepEqual(seen, all);
    assert.equal(pages, Math.ceil(all.length / 3));
  });
});
