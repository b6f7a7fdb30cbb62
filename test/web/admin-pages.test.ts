/**
 * The administrators' pages (issue 33 item 6): /admin/users lists, searches and filters users and
 * changes their state with the API's decisions and refusals; everyone else gets the 404 page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createAdmin, createSession, createToken, createUser } from '../helpers/factories.ts';
import { postForm } from '../helpers/oauth.ts';
import { assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs } from '../helpers/browser.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('admin pages', () => {
  let t: ListeningTestApp;
  let admin: UserRow;
  let cookie: string;
  let csrf: string;
  let adminToken: string;

  const get = (url: string, c = cookie) => t.request({ method: 'GET', url, headers: c ? { cookie: c } : {} });
  const post = (url: string, fields: Record<string, string>, c = cookie) => postForm(t, url, fields, { cookie: c });
  const signIn = async (u: UserRow) => {
    const c = `_service_session=${await createSession(t.db, u)}`;
    const res = await get('/-/profile/keys', c);
    return { cookie: c, csrf: /name="authenticity_token" value="([^"]+)"/.exec(res.body)![1]! };
  };
  const apiUser = async (id: number) => (await t.request({ url: `/api/v4/users/${id}`, token: adminToken })).json() as { state: string };

  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    admin = await createAdmin(t.db);
    ({ cookie, csrf } = await signIn(admin));
    adminToken = await createToken(t.db, admin, { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  describe('/admin/users', () => {
    it('is the 404 page for users who are not administrators, and asks anonymous browsers to sign in', async () => {
      const user = await signIn(await createUser(t.db));
      assert.equal((await get('/admin/users', user.cookie)).statusCode, 404);
      const target = await createUser(t.db);
      assert.equal((await post(`/admin/users/${target.id}/block`, { authenticity_token: user.csrf }, user.cookie)).statusCode, 404);
      assert.equal((await apiUser(target.id)).state, 'active');
      assert.equal((await get('/admin/users', '')).statusCode, 302);
    });

    it('lists users with a search and a state filter', async () => {
      const alice = await createUser(t.db, { username: 'alice-web3', name: 'Alice <i>' });
      const bob = await createUser(t.db, { username: 'bob-web3', state: 'blocked' });
      const list = await get('/admin/users');
      assert.equal(list.statusCode, 200);
      assert.ok(list.body.includes('Alice &lt;i&gt;'));
      assert.ok(!list.body.includes('bob-web3'), 'the default tab lists active users');
      const blocked = await get('/admin/users?filter=blocked');
      assert.ok(blocked.body.includes('bob-web3'));
      assert.ok(!blocked.body.includes('alice-web3'));
      const searched = await get('/admin/users?filter=all&search=alice-web');
      assert.ok(searched.body.includes(`id="state-${alice.id}"`));
      assert.ok(!searched.body.includes(`id="state-${bob.id}"`));
      assert.equal((await get('/admin/users?filter=nonsense&search=' + 'x'.repeat(5000))).statusCode, 200);
    });

    it('blocks, unblocks, deactivates and activates as the API does, with its refusals', async () => {
      const user = await createUser(t.db);
      const res = await post(`/admin/users/${user.id}/block`, { authenticity_token: csrf });
      assert.equal(res.statusCode, 303);
      assert.equal((await apiUser(user.id)).state, 'blocked');
      const refused = await post(`/admin/users/${user.id}/activate`, { authenticity_token: csrf });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /A blocked user must be unblocked to be activated/);
      assert.equal((await post(`/admin/users/${user.id}/unblock`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await apiUser(user.id)).state, 'active');
      assert.equal((await post(`/admin/users/${user.id}/deactivate`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await apiUser(user.id)).state, 'deactivated');
      assert.equal((await post(`/admin/users/${user.id}/activate`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await apiUser(user.id)).state, 'active');
      const events = await t.request({ url: `/api/v4/audit_events?entity_type=User&entity_id=${user.id}`, token: adminToken });
      assert.ok(JSON.stringify(events.json()).includes(`Blocked user ${user.username}`));
      assert.equal((await post(`/admin/users/${user.id}/block`, {})).statusCode, 422);
      assert.equal((await post(`/admin/users/${user.id}/nonsense`, { authenticity_token: csrf })).statusCode, 404);
      assert.equal((await post('/admin/users/99999999/block', { authenticity_token: csrf })).statusCode, 404);
    });

    it('refuses to deactivate a recently active user, and approves only users pending approval', async () => {
      const recent = await createUser(t.db, { last_activity_on: new Date().toISOString().slice(0, 10) });
      const res = await post(`/admin/users/${recent.id}/deactivate`, { authenticity_token: csrf });
      const api = await t.request({ method: 'POST', url: `/api/v4/users/${recent.id}/deactivate`, token: adminToken });
      assert.equal(api.statusCode, 403);
      assert.equal(res.statusCode, 400);
      assert.ok(res.body.includes((api.json() as { message: string }).message.replace('403 Forbidden - ', '').replace(/'/g, '&#39;')));
      const pending = await createUser(t.db, { state: 'blocked_pending_approval' });
      assert.equal((await post(`/admin/users/${pending.id}/approve`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await apiUser(pending.id)).state, 'active');
      const again = await post(`/admin/users/${pending.id}/approve`, { authenticity_token: csrf });
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /not pending approval/);
    });
  });

  describe('/admin/runners', () => {
    it('lists, pauses, resumes and deletes runners as the API does; others get the 404 page', async () => {
      const runner = await TestRunner.register(t);
      const id = runner.id;
      const apiRunner = async () => t.request({ url: `/api/v4/runners/${id}`, token: adminToken });
      const user = await signIn(await createUser(t.db));
      assert.equal((await get('/admin/runners', user.cookie)).statusCode, 404);
      assert.equal((await post(`/admin/runners/${id}/delete`, { authenticity_token: user.csrf }, user.cookie)).statusCode, 404);
      const list = await get('/admin/runners');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, new RegExp(`id="runner-status-${id}">not_connected<`));
      assert.equal((await post(`/admin/runners/${id}/pause`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal(((await apiRunner()).json() as { paused: boolean }).paused, true);
      assert.match((await get('/admin/runners')).body, new RegExp(`id="runner-status-${id}">paused<`));
      assert.equal((await post(`/admin/runners/${id}/resume`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal(((await apiRunner()).json() as { paused: boolean }).paused, false);
      assert.equal((await post(`/admin/runners/${id}/delete`, {})).statusCode, 422);
      assert.equal((await post(`/admin/runners/${id}/nonsense`, { authenticity_token: csrf })).statusCode, 404);
      assert.equal((await post(`/admin/runners/${id}/delete`, { authenticity_token: csrf })).statusCode, 303);
      assert.equal((await apiRunner()).statusCode, 404);
    });
  });

  it('is usable in a real browser, accessibly', { skip: !hasChromium() }, async () => {
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, admin);
      const page = await openPage(browser.context);
      await page.goto(`${t.url}/admin/users?filter=all`);
      await assertAccessible(page);
      await screenshot(page, 'admin-users');
      await page.goto(`${t.url}/admin/runners`);
      await assertAccessible(page);
      assertCleanConsole(page);
    } finally {
      await browser.close();
    }
  });
});
