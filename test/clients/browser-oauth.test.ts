/**
 * A real browser (Debian's chromium, driven by playwright-core) through the pages: sign in,
 * register an application on /profile/applications, authorize it on the consent page, land on
 * the redirect URI with the code, which the application then exchanges. Skipped only when
 * /usr/bin/chromium is not installed (CI installs it: apt package `chromium`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createUser } from '../helpers/factories.ts';
import { hashPassword } from '../../src/domain/users/password.ts';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'browser test password';

describe('OAuth in a real browser', () => {
  if (!fs.existsSync(CHROMIUM)) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: Browser;
  let callbackServer: http.Server;
  let callbackBase: string;

  before(async () => {
    t = await startListeningApp();
    // The third-party application's own server: it only has to answer its redirect URI.
    callbackServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
    await t?.close();
  });

  it('signs in, registers an application, authorizes it and lands on the redirect URI with the code', async () => {
    const user = await createUser(t.db, { encrypted_password: await hashPassword(PASSWORD) });
    const page = await browser.newPage();

    await page.goto(`${t.url}/users/sign_in`);
    await page.fill('input[name="user[login]"]', user.username);
    await page.fill('input[name="user[password]"]', PASSWORD);
    await Promise.all([page.waitForURL(`${t.url}/profile/applications`), page.click('button[type=submit][value="Sign in"]')]);

    const redirectUri = `${callbackBase}/callback`;
    await page.fill('#doorkeeper_application_name', 'Browser test app');
    await page.fill('#doorkeeper_application_redirect_uri', redirectUri);
    await page.check('#doorkeeper_application_scopes_api');
    await page.check('#doorkeeper_application_scopes_openid');
    await Promise.all([page.waitForLoadState('load'), page.click('button[value="Save application"]')]);
    const clientId = (await page.textContent('#application_id'))!.trim();
    const secret = (await page.textContent('#secret'))!.trim();
    assert.match(clientId, /^[0-9a-f]{64}$/);
    assert.match(secret, /^[0-9a-f]{64}$/);

    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const state = crypto.randomBytes(8).toString('hex');
    const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'api openid', state, code_challenge: challenge, code_challenge_method: 'S256' });
    await page.goto(`${t.url}/oauth/authorize?${query}`);
    assert.equal((await page.textContent('#application-name'))!.trim(), 'Browser test app');
    assert.match((await page.textContent('#scopes'))!, /openid/);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click('button[value="Authorize"]')]);

    const landed = new URL(page.url());
    assert.equal(`${landed.origin}${landed.pathname}`, redirectUri);
    assert.equal(landed.searchParams.get('state'), state);
    const code = landed.searchParams.get('code')!;
    assert.match(code, /^[0-9a-f]{64}$/);
    assert.equal(await page.textContent('body'), 'callback reached');

    const exchange = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }),
    });
    assert.equal(exchange.status, 200);
    const tokens = await exchange.json() as { access_token: string; id_token?: string };
    assert.ok(tokens.id_token);
    const me = await fetch(`${t.url}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(((await me.json()) as { username: string }).username, user.username);
    await page.close();
  });
});
