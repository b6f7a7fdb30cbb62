/**
 * The signed-in user's pages under /-/profile (issue 33 item 6), each checked against the API it
 * mirrors: what the page adds the API lists, the API's refusals are the page's 400s, another
 * user's rows are not found, and no write happens without the session's CSRF token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createSession, createToken, createUser } from '../helpers/factories.ts';
import { postForm } from '../helpers/oauth.ts';
import { gpgPublicKey, sshFingerprints, sshPublicKey } from '../helpers/keys.ts';
import {
  assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs,
} from '../helpers/browser.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('profile pages', () => {
  let t: ListeningTestApp;
  let user: UserRow;
  let cookie: string;
  let csrf: string;
  let token: string;

  const get = (url: string, c = cookie) => t.request({ method: 'GET', url, headers: c ? { cookie: c } : {} });
  const post = (url: string, fields: Record<string, string>, c = cookie) => postForm(t, url, fields, { cookie: c });
  const signIn = async (u: UserRow) => {
    const c = `_service_session=${await createSession(t.db, u)}`;
    const res = await get('/-/profile/keys', c);
    return { cookie: c, csrf: /name="authenticity_token" value="([^"]+)"/.exec(res.body)![1]! };
  };

  before(async () => {
    t = await startListeningApp();
    user = await createUser(t.db);
    ({ cookie, csrf } = await signIn(user));
    token = await createToken(t.db, user, { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  describe('/-/profile/keys', () => {
    it('sends anonymous browsers to sign in and back', async () => {
      const res = await get('/-/profile/keys', '');
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, `/users/sign_in?return_to=${encodeURIComponent('/-/profile/keys')}`);
    });

    it('adds a key the API then lists, with its fingerprint on the page', async () => {
      const line = sshPublicKey('ed25519', 'me@laptop');
      const res = await post('/-/profile/keys', { authenticity_token: csrf, title: 'Laptop <b>', key: line, usage_type: 'auth', expires_at: '2999-01-31' });
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, '/-/profile/keys');
      const api = await t.request({ url: '/api/v4/user/keys', token });
      const [key] = api.json() as { id: number; title: string; usage_type: string; expires_at: string }[];
      assert.equal(key!.title, 'Laptop <b>');
      assert.equal(key!.usage_type, 'auth');
      assert.match(key!.expires_at, /^2999-01-31T00:00:00/);
      const page = await get('/-/profile/keys');
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes('Laptop &lt;b&gt;'));
      assert.ok(page.body.includes(sshFingerprints(line).sha256));
      assert.ok(page.body.includes(`action="/-/profile/keys/${key!.id}/delete"`));
    });

    it('answers 400 with the API\'s messages and keeps what was typed', async () => {
      const taken = sshPublicKey();
      assert.equal((await t.request({ method: 'POST', url: '/api/v4/user/keys', token, payload: { title: 'api', key: taken } })).statusCode, 201);
      const dup = await post('/-/profile/keys', { authenticity_token: csrf, title: 'again', key: taken });
      assert.equal(dup.statusCode, 400);
      assert.match(dup.body, /fingerprint has already been taken/);
      assert.ok(dup.body.includes('value="again"'));
      const bad = await post('/-/profile/keys', { authenticity_token: csrf, title: '', key: 'ssh-rsa nonsense' });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /title can&#39;t be blank/);
      assert.match(bad.body, /key is invalid/);
      const expired = await post('/-/profile/keys', { authenticity_token: csrf, title: 'old', key: sshPublicKey(), expires_at: '2001-01-01' });
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /key has expired/);
      const badDate = await post('/-/profile/keys', { authenticity_token: csrf, title: 'x', key: sshPublicKey(), expires_at: 'soon' });
      assert.equal(badDate.statusCode, 400);
      assert.match(badDate.body, /expires_at is invalid/);
    });

    it('writes nothing without the session\'s CSRF token', async () => {
      const before = (await t.request({ url: '/api/v4/user/keys', token })).json().length;
      const res = await post('/-/profile/keys', { title: 'forged', key: sshPublicKey() });
      assert.equal(res.statusCode, 422);
      const [key] = (await t.request({ url: '/api/v4/user/keys', token })).json() as { id: number }[];
      assert.equal((await post(`/-/profile/keys/${key!.id}/delete`, {})).statusCode, 422);
      assert.equal((await t.request({ url: '/api/v4/user/keys', token })).json().length, before);
    });

    it('deletes a key, and treats another user\'s key as not found', async () => {
      const created = await t.request({ method: 'POST', url: '/api/v4/user/keys', token, payload: { title: 'gone', key: sshPublicKey() } });
      const id = (created.json() as { id: number }).id;
      const stranger = await signIn(await createUser(t.db));
      assert.equal((await post(`/-/profile/keys/${id}/delete`, { authenticity_token: stranger.csrf }, stranger.cookie)).statusCode, 404);
      assert.equal((await post('/-/profile/keys/x1/delete', { authenticity_token: csrf })).statusCode, 404);
      assert.equal((await t.request({ url: `/api/v4/user/keys/${id}`, token })).statusCode, 200);
      const res = await post(`/-/profile/keys/${id}/delete`, { authenticity_token: csrf });
      assert.equal(res.statusCode, 303);
      assert.equal((await t.request({ url: `/api/v4/user/keys/${id}`, token })).statusCode, 404);
    });
  });

  describe('/-/profile/gpg_keys', () => {
    const URL = '/-/profile/gpg_keys';
    it('adds a key the API lists, refuses what the API refuses, removes only own keys', async () => {
      assert.equal((await get(URL, '')).statusCode, 302);
      const gpg = await gpgPublicKey([user.email]);
      const res = await post(URL, { authenticity_token: csrf, key: gpg.armored });
      assert.equal(res.statusCode, 303, res.body);
      const [key] = (await t.request({ url: '/api/v4/user/gpg_keys', token })).json() as { id: number }[];
      assert.ok(key);
      const page = await get(URL);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(gpg.fingerprint));
      const again = await post(URL, { authenticity_token: csrf, key: gpg.armored });
      const api = await t.request({ method: 'POST', url: '/api/v4/user/gpg_keys', token, payload: { key: gpg.armored } });
      assert.equal(api.statusCode, 400);
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /has already been taken/);
      const bad = await post(URL, { authenticity_token: csrf, key: 'not a key' });
      assert.equal(bad.statusCode, 400);
      assert.ok(bad.body.includes('>not a key</textarea>'));
      assert.equal((await post(URL, { key: gpg.armored })).statusCode, 422);
      const stranger = await signIn(await createUser(t.db));
      assert.equal((await post(`${URL}/${key.id}/delete`, { authenticity_token: stranger.csrf }, stranger.cookie)).statusCode, 404);
      assert.equal((await post(`${URL}/${key.id}/delete`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await t.request({ url: `/api/v4/user/gpg_keys/${key.id}`, token })).statusCode, 404);
    });
  });

  describe('/-/profile/personal_access_tokens', () => {
    const URL = '/-/profile/personal_access_tokens';
    const create = (fields: Record<string, string | string[]>, c = cookie) => {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
      return t.request({ method: 'POST', url: URL, payload: body.toString(), headers: { cookie: c, 'content-type': 'application/x-www-form-urlencoded' } });
    };

    it('sends anonymous browsers to sign in', async () => {
      assert.equal((await get(URL, '')).statusCode, 302);
    });

    it('creates a token shown once that authenticates with its scopes, storing only its digest', async () => {
      const res = await create({ authenticity_token: csrf, name: 'ci <bot>', expires_at: '2999-12-31', 'scopes[]': ['read_api', 'read_user'] });
      assert.equal(res.statusCode, 201, res.body);
      const secret = /id="created-personal-access-token">([^<]+)</.exec(res.body)![1]!;
      const self = await t.request({ url: '/api/v4/personal_access_tokens/self', token: secret });
      assert.equal(self.statusCode, 200);
      const body = self.json() as { id: number; name: string; scopes: string[]; expires_at: string };
      assert.equal(body.name, 'ci <bot>');
      assert.deepEqual(body.scopes, ['read_api', 'read_user']);
      assert.equal(body.expires_at, '2999-12-31');
      const rows = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', body.id).execute();
      assert.ok(!JSON.stringify(rows).includes(secret));
      const events = await t.request({ url: `/api/v4/audit_events?entity_type=User&entity_id=${user.id}`, token: await createToken(t.db, await createUser(t.db, { admin: 1 }), { scopes: ['api'] }) });
      assert.ok(JSON.stringify(events.json()).includes(`Created personal access token with id ${body.id}`));
      const page = await get(URL);
      assert.ok(page.body.includes('ci &lt;bot&gt;'));
      assert.ok(!page.body.includes(secret));
    });

    it('answers 400 with the API\'s messages: no name, no scopes, a scope the user may not have', async () => {
      const res = await create({ authenticity_token: csrf, name: '' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /name can&#39;t be blank/);
      assert.match(res.body, /scopes can&#39;t be blank/);
      const sudo = await create({ authenticity_token: csrf, name: 'kept', 'scopes[]': 'sudo' });
      assert.equal(sudo.statusCode, 400);
      assert.match(sudo.body, /scopes can only contain available scopes/);
      assert.ok(sudo.body.includes('value="kept"'));
      assert.ok(!sudo.body.includes('value="sudo"'), 'admin scopes are not offered to users');
      const date = await create({ authenticity_token: csrf, name: 'x', 'scopes[]': 'api', expires_at: '2024-02-30' });
      assert.equal(date.statusCode, 400);
      assert.match(date.body, /expires_at is invalid/);
      assert.equal((await create({ name: 'forged', 'scopes[]': 'api' })).statusCode, 422);
    });

    it('revokes own tokens only; a revoked token stops authenticating and is listed as inactive', async () => {
      const mine = await createToken(t.db, user, { scopes: ['api'], name: 'to revoke' });
      const row = (await t.request({ url: '/api/v4/personal_access_tokens/self', token: mine })).json() as { id: number };
      const stranger = await signIn(await createUser(t.db));
      assert.equal((await post(`${URL}/${row.id}/revoke`, { authenticity_token: stranger.csrf }, stranger.cookie)).statusCode, 404);
      assert.equal((await post(`${URL}/${row.id}/revoke`, {})).statusCode, 422);
      assert.equal((await t.request({ url: '/api/v4/user', token: mine })).statusCode, 200);
      const res = await post(`${URL}/${row.id}/revoke`, { authenticity_token: csrf });
      assert.equal(res.statusCode, 303);
      assert.equal((await t.request({ url: '/api/v4/user', token: mine })).statusCode, 401);
      const page = await get(URL);
      assert.match(page.body, /Inactive personal access tokens \(1\)/);
      assert.ok(!page.body.includes(`${URL}/${row.id}/revoke`));
    });
  });

  it('is usable in a real browser, accessibly', { skip: !hasChromium() }, async () => {
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, user);
      const page = await openPage(browser.context);
      await page.goto(`${t.url}/-/profile/keys`);
      await page.fill('#key-key', sshPublicKey('rsa', 'browser@test'));
      await page.fill('#key-title', 'Added in a browser');
      await page.click('button:has-text("Add key")');
      await page.waitForSelector('td:has-text("Added in a browser")');
      await assertAccessible(page);
      await screenshot(page, 'profile-keys');
      await page.goto(`${t.url}/-/profile/gpg_keys`);
      await assertAccessible(page);
      await page.goto(`${t.url}/-/profile/personal_access_tokens`);
      await page.fill('#token-name', 'Made in a browser');
      await page.check('input[value="read_repository"]');
      await page.click('button:has-text("Create personal access token")');
      await page.waitForSelector('#created-personal-access-token');
      await assertAccessible(page);
      await screenshot(page, 'profile-personal-access-tokens');
      assertCleanConsole(page);
    } finally {
      await browser.close();
    }
  });
});
