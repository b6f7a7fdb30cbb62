/**
 * Broadcast messages on the pages served outside the web router (issue 33: "shown while active",
 * on every page; the Service's sign-in layout, layouts/devise, renders them too): sign-in and its
 * error pages, sign-up, /profile/applications and OAuth's consent and error pages, with the
 * router's rules: only while a message runs, `target_path` over the page's own path, the dismiss
 * cookie, and no role-targeted message for a visitor with no role.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { authorizeQuery, postForm, REDIRECT_URI, registerClient, signedInBrowser, type Browser, type TestClient } from '../helpers/oauth.ts';
import { CONTENT_SECURITY_POLICY } from '../../src/web/layout.ts';

const HOUR = 3_600_000;
const iso = (offset: number) => new Date(Date.now() + offset).toISOString();

describe('web interface: broadcast messages outside the router', () => {
  let t: TestApp;
  let browser: Browser;
  let client: TestClient;
  const created: number[] = [];
  const get = (url: string, cookie = '') => t.request({ url, headers: cookie ? { cookie } : {} });
  const banner = (res: LightMyRequestResponse, id: number) => res.body.includes(`id="broadcast-message-${id}"`);
  const consentUrl = () => authorizeQuery({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api' });

  async function broadcast(fields: Record<string, unknown>): Promise<number> {
    const res = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: fields });
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as { id: number }).id;
    created.push(id);
    return id;
  }

  /** The page at `url` (with `cookie`), asserted to answer `status` as an HTML page. */
  async function page(url: string, status: number, cookie = ''): Promise<LightMyRequestResponse> {
    const res = await get(url, cookie);
    assert.equal(res.statusCode, status, `${url}: ${res.body.slice(0, 300)}`);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    return res;
  }

  before(async () => {
    t = await startTestApp();
    browser = await signedInBrowser(t, await createUser(t.db));
    client = await registerClient(t, { name: 'Banner client' });
    const on = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { signup_enabled: true } });
    assert.equal(on.statusCode, 200, on.body);
  });
  afterEach(async () => {
    while (created.length > 0) {
      await t.request({ method: 'DELETE', url: `/api/v4/broadcast_messages/${created.pop()}`, token: ROOT_TOKEN });
    }
  });
  after(async () => { await t.close(); });

  it('shows a current banner on sign-in, sign-up, the consent page, applications and their error pages', async () => {
    const id = await broadcast({ message: '**Upgrade** at noon', color: '#123456', dismissable: true });
    const pages: [string, LightMyRequestResponse][] = [
      ['sign-in', await page('/users/sign_in', 200)],
      ['sign-up', await page('/users/sign_up', 200)],
      ['consent', await page(consentUrl(), 200, browser.cookie)],
      ['applications', await page('/profile/applications', 200, browser.cookie)],
      // An unknown client is OAuth's error page, not a redirect (RFC 6749 §4.1.2.1).
      ['OAuth error', await page(authorizeQuery({ client_id: 'nope', redirect_uri: REDIRECT_URI, response_type: 'code' }), 401, browser.cookie)],
    ];
    const form = await page('/users/sign_in', 200);
    const pre = `_service_csrf=${form.cookies.find((c) => c.name === '_service_csrf')!.value}`;
    const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1]!;
    const failed = await postForm(t, '/users/sign_in', { 'user[login]': 'nobody', 'user[password]': 'wrong password', authenticity_token: token }, { cookie: pre });
    assert.equal(failed.statusCode, 401);
    assert.match(failed.body, /Invalid login or password\./);
    pages.push(['sign-in failed', failed]);
    const forged = await postForm(t, '/users/sign_in', { 'user[login]': 'nobody', 'user[password]': 'x' });
    assert.equal(forged.statusCode, 422);
    pages.push(['CSRF rejected', forged]);
    for (const [name, res] of pages) {
      assert.ok(banner(res, id), `the banner on the ${name} page`);
      assert.match(res.body, /<strong>Upgrade<\/strong> at noon/, name);
      assert.match(res.body, /<link rel="stylesheet" href="\/-\/broadcast_messages\.css\?v=[0-9a-f]{16}">/, name);
      assert.match(res.body, /<script src="\/-\/assets\/broadcast-[0-9a-f]{16}\.js" defer><\/script>/, `${name}: the close button's script`);
      assert.ok(!/style=|<script>/.test(res.body), `${name}: nothing inline for the policy to refuse`);
      assert.equal(res.headers['content-security-policy'], CONTENT_SECURITY_POLICY, name);
    }
    // The JSON endpoints beside the pages are not pages: nothing changes there.
    const discovery = await get('/.well-known/openid-configuration');
    assert.equal(discovery.statusCode, 200);
    assert.ok(!discovery.body.includes('broadcast'));
  });

  it('shows a message only while it runs', async () => {
    const ended = await broadcast({ message: 'Ended', starts_at: iso(-2 * HOUR), ends_at: iso(-HOUR) });
    const later = await broadcast({ message: 'Later', starts_at: iso(HOUR), ends_at: iso(2 * HOUR) });
    const now = await broadcast({ message: 'Now', ends_at: iso(HOUR) });
    for (const [url, cookie] of [['/users/sign_in', ''], ['/users/sign_up', ''], [consentUrl(), browser.cookie]] as const) {
      const res = await page(url, 200, cookie);
      assert.ok(banner(res, now) && !banner(res, ended) && !banner(res, later), url);
    }
  });

  it('matches target_path against the page\'s own path', async () => {
    const signIn = await broadcast({ message: 'Sign-in only', target_path: '/users/sign_in' });
    const oauth = await broadcast({ message: 'OAuth only', target_path: '/OAUTH/*' });
    const signInPage = await page('/users/sign_in?return_to=%2Fexplore', 200);
    assert.ok(banner(signInPage, signIn) && !banner(signInPage, oauth), 'the query is not part of the path');
    const signUpPage = await page('/users/sign_up', 200);
    assert.ok(!banner(signUpPage, signIn) && !banner(signUpPage, oauth));
    const consent = await page(consentUrl(), 200, browser.cookie);
    assert.ok(banner(consent, oauth) && !banner(consent, signIn));
  });

  it('hides a dismissed message while its cookie is set', async () => {
    const id = await broadcast({ message: 'Closable', dismissable: true, ends_at: iso(HOUR) });
    const other = await broadcast({ message: 'Still here', ends_at: iso(HOUR) });
    const res = await page('/users/sign_in', 200, `hide_broadcast_message_${id}=true`);
    assert.ok(!banner(res, id) && banner(res, other));
    const consent = await page(consentUrl(), 200, `${browser.cookie}; hide_broadcast_message_${id}=true`);
    assert.ok(!banner(consent, id) && banner(consent, other));
  });

  it('never shows a role-targeted message to a visitor with no role, the flag on', async () => {
    const targeted = await broadcast({ message: 'Maintainers', target_access_levels: [40] });
    const everyone = await broadcast({ message: 'Everyone' });
    const on = await t.request({ method: 'POST', url: '/api/v4/features/role_targeted_broadcast_messages', token: ROOT_TOKEN, payload: { value: 'true' } });
    assert.equal(on.statusCode, 201, on.body);
    try {
      for (const [url, cookie] of [['/users/sign_in', ''], ['/users/sign_up', ''], [consentUrl(), browser.cookie]] as const) {
        const res = await page(url, 200, cookie);
        assert.ok(banner(res, everyone) && !banner(res, targeted), url);
      }
    } finally {
      await t.request({ method: 'DELETE', url: '/api/v4/features/role_targeted_broadcast_messages', token: ROOT_TOKEN });
    }
  });
});
