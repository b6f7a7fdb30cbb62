/**
 * The whole OpenID Connect flow driven by a real relying-party library (openid-client) against a
 * listening kiln: discovery, authorization code + PKCE (S256) with state and nonce, the token
 * exchange with id_token validation (signature via the JWKS, iss, aud, exp, nonce), userinfo,
 * refresh, and revocation. The browser part (sign in, consent) is played with fetch here; the
 * real-browser version is browser-oauth.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createUser } from '../helpers/factories.ts';
import { registerClient, type TestClient } from '../helpers/oauth.ts';
import { hashPassword } from '../../src/domain/users/password.ts';
import type { UserRow } from '../../src/db/types.ts';

const PASSWORD = 'openid client password';
const REDIRECT = 'https://rp.example/callback';

/** A tiny cookie jar over fetch, never following redirects. */
class Browser {
  private readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value === '') this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), value);
    }
    return res;
  }
  async submit(url: string, fields: Record<string, string>): Promise<Response> {
    return this.fetch(url, { method: 'POST', body: new URLSearchParams(fields), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }
}

function hiddenFields(formHtml: string): Record<string, string> {
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const out: Record<string, string> = {};
  for (const m of formHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[unescape(m[1])] = unescape(m[2]);
  return out;
}

describe('openid-client against kiln', () => {
  let t: ListeningTestApp;
  let user: UserRow;
  let rp: TestClient;
  let config: client.Configuration;

  before(async () => {
    t = await startListeningApp();
    user = await createUser(t.db, { encrypted_password: await hashPassword(PASSWORD), name: 'Grace Hopper' });
    rp = await registerClient(t, { redirectUri: REDIRECT, scopes: ['openid', 'profile', 'email', 'api'] });
    config = await client.discovery(new URL(t.url), rp.clientId, rp.secret, client.ClientSecretBasic(rp.secret), { execute: [client.allowInsecureRequests] });
  });
  after(async () => { await t.close(); });

  it('discovers the provider', () => {
    const meta = config.serverMetadata();
    assert.equal(meta.issuer, t.url);
    assert.equal(meta.token_endpoint, `${t.url}/oauth/token`);
    assert.ok(meta.code_challenge_methods_supported?.includes('S256'));
  });

  it('runs code + PKCE, validates the id_token, reads userinfo, refreshes and revokes', async () => {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT, scope: 'openid profile email api', code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256', state, nonce,
    });

    // The browser: sent to sign in, signs in with the real form, comes back, consents.
    const browser = new Browser();
    const toSignIn = await browser.fetch(authUrl.href);
    assert.equal(toSignIn.status, 302);
    const signInUrl = new URL(toSignIn.headers.get('location')!, t.url);
    const form = await browser.fetch(signInUrl.href);
    const signedIn = await browser.submit(`${t.url}/users/sign_in`, { ...hiddenFields(await form.text()), 'user[login]': user.username, 'user[password]': PASSWORD });
    assert.equal(signedIn.status, 303);
    const back = new URL(signedIn.headers.get('location')!, t.url);
    assert.equal(back.pathname, '/oauth/authorize');
    const consent = await browser.fetch(back.href);
    assert.equal(consent.status, 200);
    const page = await consent.text();
    const authorizeForm = page.slice(page.indexOf('<form class="inline" method="post" action="/oauth/authorize">'), page.indexOf('value="Authorize"'));
    const approved = await browser.submit(`${t.url}/oauth/authorize`, hiddenFields(authorizeForm));
    assert.equal(approved.status, 303);
    const callback = new URL(approved.headers.get('location')!);

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.expires_in, 7200);
    const claims = tokens.claims()!;
    assert.equal(claims.sub, String(user.id));
    assert.equal(claims.iss, t.url);
    assert.equal(claims.aud, rp.clientId);
    assert.equal(claims.nonce, nonce);
    assert.equal(claims.email, user.email);

    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.equal(info.preferred_username, user.username);
    assert.equal(info.name, 'Grace Hopper');

    const api = await fetch(`${t.url}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(api.status, 200);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.equal(refreshed.claims()?.sub, claims.sub);
    const old = await fetch(`${t.url}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(old.status, 401);
    // Doorkeeper sends its errors with a WWW-Authenticate challenge too, which the library reports as such.
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (err: client.WWWAuthenticateChallengeError) =>
      err.status === 400 && err.cause[0].parameters.error === 'invalid_grant');

    await client.tokenRevocation(config, refreshed.access_token);
    const revoked = await fetch(`${t.url}/api/v4/user`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    assert.equal(revoked.status, 401);
    await assert.rejects(client.fetchUserInfo(config, refreshed.access_token, claims.sub));
  });

  it('sees a denial as an authorization error', async () => {
    const state = client.randomState();
    const callback = new URL(`${REDIRECT}?error=access_denied&error_description=x&state=${state}`);
    await assert.rejects(client.authorizationCodeGrant(config, callback, { expectedState: state }), (err: Error) => err.name === 'AuthorizationResponseError');
  });
});
