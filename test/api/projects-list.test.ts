/** GET /projects: visibility per viewer, filters, orders, offset ceiling and keyset (reference §7.4, §7.5). */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('GET /projects', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bobToken: string;
  let carolToken: string;
  const ids: Record<string, number> = {};

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    const bob = await createUser(t.db);
    bobToken = await createToken(t.db, bob);
    const carol = await createUser(t.db, { external: 1 });
    carolToken = await createToken(t.db, carol);
    for (const [name, visibility] of [['Alpha', 'private'], ['Beta', 'internal'], ['Gamma', 'public'], ['Delta', 'private']] as const) {
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: aliceToken, payload: { name, visibility, description: `${name} things` } });
      assert.equal(res.statusCode, 201, res.body);
      ids[name] = res.json().id;
    }
    // Bob is a reporter of Delta.
    await t.request({ method: 'POST', url: `/api/v4/projects/${ids.Delta}/members`, token: aliceToken, payload: { user_id: bob.id, access_level: 20 } });
    await t.request({ method: 'POST', url: `/api/v4/projects/${ids.Beta}/archive`, token: aliceToken });
  });
  after(async () => { await t.close(); });

  const names = async (url: string, token?: string) => {
    const res = await t.request({ url, token });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { name: string }[]).map((p) => p.name);
  };

  it('shows each viewer what they may see, newest first', async () => {
    assert.deepEqual(await names('/api/v4/projects'), ['Gamma']);
    assert.deepEqual(await names('/api/v4/projects', carolToken), ['Gamma']);
    assert.deepEqual(await names('/api/v4/projects', bobToken), ['Delta', 'Gamma', 'Beta']);
    assert.deepEqual(await names('/api/v4/projects', aliceToken), ['Delta', 'Gamma', 'Beta', 'Alpha']);
    assert.deepEqual(await names('/api/v4/projects', ROOT_TOKEN), ['Delta', 'Gamma', 'Beta', 'Alpha']);
  });

  it('filters by membership, ownership, visibility, archived, search and access level', async () => {
    assert.deepEqual(await names('/api/v4/projects?membership=true', bobToken), ['Delta']);
    assert.deepEqual(await names('/api/v4/projects?owned=true', bobToken), []);
    assert.deepEqual(await names('/api/v4/projects?owned=true&order_by=name&sort=asc', aliceToken), ['Alpha', 'Beta', 'Delta', 'Gamma']);
    assert.deepEqual(await names('/api/v4/projects?visibility=internal', aliceToken), ['Beta']);
    assert.deepEqual(await names('/api/v4/projects?archived=true', aliceToken), ['Beta']);
    assert.deepEqual(await names('/api/v4/projects?archived=false&order_by=path&sort=asc', aliceToken), ['Alpha', 'Delta', 'Gamma']);
    assert.deepEqual(await names('/api/v4/projects?search=AMM', aliceToken), ['Gamma']);
    assert.deepEqual(await names('/api/v4/projects?search=%25', aliceToken), []);
    assert.deepEqual(await names('/api/v4/projects?min_access_level=30', bobToken), []);
    assert.deepEqual(await names('/api/v4/projects?min_access_level=20', bobToken), ['Delta']);
    const bad = await t.request({ url: '/api/v4/projects?order_by=stars', token: aliceToken });
    assert.deepEqual(bad.json(), { error: 'order_by does not have a valid value' });
  });

  it('filters by repository storage for administrators only', async () => {
    assert.equal((await names('/api/v4/projects?repository_storage=default', ROOT_TOKEN)).length, 4);
    assert.deepEqual(await names('/api/v4/projects?repository_storage=elsewhere', ROOT_TOKEN), []);
    // Ignored for everyone else.
    assert.equal((await names('/api/v4/projects?repository_storage=elsewhere', aliceToken)).length, 4);
    const admin = await t.request({ url: '/api/v4/projects?per_page=1', token: ROOT_TOKEN });
    assert.equal(admin.json()[0].repository_storage, 'default');
  });

  it('pages by offset with headers, and refuses offsets past 50,000', async () => {
    const res = await t.request({ url: '/api/v4/projects?per_page=2&order_by=id&sort=asc', token: aliceToken });
    assert.deepEqual(res.json().map((p: { id: number }) => p.id), [ids.Alpha, ids.Beta]);
    assert.equal(res.headers['x-total'], '4');
    assert.equal(res.headers['x-next-page'], '2');
    assert.match(String(res.headers.link), /rel="next"/);
    const deep = await t.request({ url: '/api/v4/projects?page=2502&per_page=20', token: aliceToken });
    assert.equal(deep.statusCode, 405);
    assert.deepEqual(deep.json(), { error: 'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. Remaining records can be retrieved using keyset pagination.' });
  });

  it('pages by keyset on id with only a rel="next" link', async () => {
    const first = await t.request({ url: '/api/v4/projects?pagination=keyset&order_by=id&sort=asc&per_page=3', token: aliceToken });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(first.json().map((p: { id: number }) => p.id), [ids.Alpha, ids.Beta, ids.Gamma]);
    assert.equal(first.headers['x-total'], undefined);
    const link = String(first.headers.link);
    assert.match(link, new RegExp(`id_after=${ids.Gamma}.*>; rel="next"$`));
    const next = new URL(/<([^>]+)>/.exec(link)![1]);
    const second = await t.request({ url: `${next.pathname}${next.search}`, token: aliceToken });
    assert.deepEqual(second.json().map((p: { id: number }) => p.id), [ids.Delta]);
    assert.equal(second.headers.link, undefined);
    const desc = await t.request({ url: '/api/v4/projects?pagination=keyset&order_by=id&per_page=1' });
    assert.deepEqual(desc.json().map((p: { id: number }) => p.id), [ids.Gamma]);
    const unsupported = await t.request({ url: '/api/v4/projects?pagination=keyset&order_by=name', token: aliceToken });
    assert.equal(unsupported.statusCode, 405);
    assert.deepEqual(unsupported.json(), { error: 'Keyset pagination is not yet available for this type of request' });
  });
});
