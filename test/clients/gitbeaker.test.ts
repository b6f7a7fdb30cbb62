/**
 * The Service's TypeScript client, unchanged, against a listening kiln (reference clients.md §2):
 * `token` (PRIVATE-TOKEN), `oauthToken` (Bearer), `sudo` (header), errors, and Link following.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { createOauthToken, createToken, createUser } from '../helpers/factories.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

describe('@gitbeaker/rest', () => {
  let t: ListeningTestApp;
  let alice: UserRow;
  let aliceToken: string;

  before(async () => {
    t = await startListeningApp();
    alice = await createUser(t.db, { name: 'Alice Liddell' });
    aliceToken = await createToken(t.db, alice);
    for (let i = 0; i < 6; i++) await createUser(t.db);
  });
  after(async () => { await t.close(); });

  it('shows the current user and a user by id with a personal access token', async () => {
    const api = new Gitlab({ host: t.url, token: aliceToken });
    const me = await api.Users.showCurrentUser();
    assert.equal(me.id, alice.id);
    assert.equal(me.username, alice.username);
    assert.equal(me.email, alice.email);
    assert.equal(me.web_url, `${t.url}/${alice.username}`);
    const root = await api.Users.show(1);
    assert.equal(root.id, 1);
    assert.equal(root.username, 'root');
  });

  it('authenticates with an OAuth token sent as Bearer', async () => {
    const api = new Gitlab({ host: t.url, oauthToken: await createOauthToken(t.db, alice, { scopes: ['read_user'] }) });
    const me = await api.Users.showCurrentUser();
    assert.equal(me.id, alice.id);
    assert.equal((await api.Users.show(alice.id)).name, 'Alice Liddell');
  });

  it('acts as another user through sudo, sent as a header', async () => {
    const api = new Gitlab({ host: t.url, token: ROOT_TOKEN, sudo: alice.username.toUpperCase() });
    const me = await api.Users.showCurrentUser();
    assert.equal(me.id, alice.id);
    const byId = new Gitlab({ host: t.url, token: ROOT_TOKEN, sudo: alice.id });
    assert.equal((await byId.Users.showCurrentUser()).id, alice.id);
    const plain = new Gitlab({ host: t.url, token: ROOT_TOKEN });
    assert.equal((await plain.Users.showCurrentUser()).id, 1);
  });

  it('surfaces the Service\'s error texts', async () => {
    const api = new Gitlab({ host: t.url, token: 'wrong-token-000000000' });
    await assert.rejects(api.Users.showCurrentUser(), (err: Error & { cause?: { description?: string; response?: Response } }) => {
      assert.equal(err.cause?.response?.status, 401);
      assert.equal(err.cause?.description, '401 Unauthorized');
      return true;
    });
    const sudo = new Gitlab({ host: t.url, token: aliceToken, sudo: 1 });
    await assert.rejects(sudo.Users.showCurrentUser(), (err: Error & { cause?: { description?: string } }) => {
      assert.equal(err.cause?.description, '403 Forbidden - Must be admin to use sudo');
      return true;
    });
    const missing = new Gitlab({ host: t.url, token: aliceToken });
    await assert.rejects(missing.Users.show(999999), (err: Error & { cause?: { description?: string } }) => {
      assert.equal(err.cause?.description, '404 User Not Found');
      return true;
    });
  });

  it('lists every user by following Link rel="next" to the end', async () => {
    const api = new Gitlab({ host: t.url, token: ROOT_TOKEN });
    const all = await api.Users.all({ perPage: 2 });
    const ids = all.map((u) => u.id);
    const expected = (await t.db.selectFrom('users').select('id').orderBy('id', 'desc').execute()).map((r) => r.id);
    assert.equal(expected.length, 8);
    assert.deepEqual(ids, expected, 'every user once, newest first');

    const expanded = await api.Users.all({ perPage: 3, page: 2, showExpanded: true });
    assert.deepEqual(expanded.paginationInfo, { total: 8, next: 3, current: 2, previous: 1, perPage: 3, totalPages: 3 });
    assert.deepEqual(expanded.data.map((u) => u.id), expected.slice(3, 6));
  });

  it('pages a filtered list, the filter travelling in each next link', async () => {
    const api = new Gitlab({ host: t.url, token: ROOT_TOKEN });
    const found = await api.Users.all({ perPage: 1, search: 'user' });
    assert.equal(found.length, 7);
    assert.ok(found.every((u) => u.username.startsWith('user')), 'root never appears: the search filter held on every page');
  });
});
