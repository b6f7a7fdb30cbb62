/**
 * Personal snippets as the Service 15.2 API takes them (issue 35, item 11) and the public list
 * (GET /snippets/public, which `/snippets/:id` used to swallow as `400 id is invalid`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('snippets: public list and files', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice);
    bobToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t?.close(); });

  const create = (token: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v4/snippets', token, payload });

  it('lists every public personal snippet, newest first, to any signed-in user', async () => {
    const pub1 = (await create(aliceToken, { title: 'p1', file_name: 'a.txt', content: 'a', visibility: 'public' })).json();
    await create(aliceToken, { title: 'internal', file_name: 'b.txt', content: 'b', visibility: 'internal' });
    await create(aliceToken, { title: 'private', file_name: 'c.txt', content: 'c', visibility: 'private' });
    const pub2 = (await create(bobToken, { title: 'p2', file_name: 'd.txt', content: 'd', visibility: 'public' })).json();
    const res = await t.request({ url: '/api/v4/snippets/public', token: bobToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((s: { id: number }) => s.id), [pub2.id, pub1.id]);
    assert.equal(res.headers['x-total'], '2');
    assert.equal(res.json()[1].author.id, alice.id);
    assert.equal(res.json()[0].repository_storage, undefined);
    const admin = await t.request({ url: '/api/v4/snippets/public?per_page=1', token: ROOT_TOKEN });
    assert.deepEqual(admin.json().map((s: { id: number; repository_storage: string }) => [s.id, s.repository_storage]), [[pub2.id, 'default']]);
    assert.equal(admin.headers['x-next-page'], '2');
    assert.equal((await t.request({ url: '/api/v4/snippets/public' })).statusCode, 401);
  });
});
