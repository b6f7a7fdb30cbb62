import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { basicAuth, obtainTokens, REDIRECT_URI, registerClient, signedInBrowser, tokenRequest, type Browser, type TestClient } from '../helpers/oauth.ts';

describe('POST /oauth/token, grant_type=refresh_token', () => {
  let t: TestApp;
  let browser: Browser;
  let client: TestClient;
  const refresh = (refreshToken: string | undefined, extra: Record<string, string | undefined> = {}, headers: Record<string, string> = {}) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.clientId, client_secret: client.secret, ...extra }, headers);
  const api = (token: string) => t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    t = await startTestApp();
    browser = await signedInBrowser(t, await createUser(t.db));
    client = await registerClient(t);
  });
  after(async () => { await t.close(); });

  it('rotates: new access and refresh tokens, the old pair stops working at once', async () => {
    const first = await obtainTokens(t, browser, client, 'api read_user');
    assert.equal((await api(first.access_token)).statusCode, 200); // now cached by the API
    const res = await refresh(first.refresh_token);
    assert.equal(res.statusCode, 200);
    const second = res.json();
    assert.deepEqual(Object.keys(second), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(second.scope, 'api read_user');
    assert.equal(second.expires_in, 7200);
    const old = await api(first.access_token);
    assert.equal(old.statusCode, 401);
    assert.equal(old.json().error_description, 'Token was revoked. You have to re-authorize from the user.');
    assert.equal((await api(second.access_token)).statusCode, 200);
    const rows = await t.db.selectFrom('oauth_access_tokens').selectAll().orderBy('id', 'desc').limit(2).execute();
    assert.equal(rows[0].previous_refresh_token_digest, rows[1].refresh_token_digest);
    assert.notEqual(rows[1].revoked_at, null);
  });

  it('refuses a reused refresh token and revokes the generations issued after it', async () => {
    const first = await obtainTokens(t, browser, client);
    const second = (await refresh(first.refresh_token)).json();
    const third = (await refresh(second.refresh_token)).json();
    assert.equal((await api(third.access_token)).statusCode, 200);
    const reuse = await refresh(first.refresh_token);
    assert.equal(reuse.statusCode, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    assert.equal((await api(third.access_token)).statusCode, 401);
    assert.equal((await refresh(third.refresh_token)).statusCode, 400);
  });

  it('refuses a redirect_uri that differs from the authorization request (spec rule 1) and accepts the same or none', async () => {
    const first = await obtainTokens(t, browser, client);
    const wrong = await refresh(first.refresh_token, { redirect_uri: 'https://client.example/other' });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error, 'invalid_grant');
    const same = await refresh(first.refresh_token, { redirect_uri: REDIRECT_URI });
    assert.equal(same.statusCode, 200);
    const none = await refresh(same.json().refresh_token);
    assert.equal(none.statusCode, 200);
  });

  it('lets only one of two concurrent refreshes with one token succeed', async () => {
    const first = await obtainTokens(t, browser, client);
    const results = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
  });

  it('keeps working after the access token expired (spec rule 7), and the expired token is refused', async () => {
    const first = await obtainTokens(t, browser, client);
    await t.db.updateTable('oauth_access_tokens').set({ created_at: new Date(Date.now() - 7201_000).toISOString() })
      .where('revoked_at', 'is', null).execute();
    t.app.kiln.authCache.clear();
    const expired = await api(first.access_token);
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().error_description, 'Token is expired. You can either do re-authorization or token refresh.');
    const res = await refresh(first.refresh_token);
    assert.equal(res.statusCode, 200);
    assert.equal((await api(res.json().access_token)).statusCode, 200);
  });

  it('binds the refresh token to its client', async () => {
    const first = await obtainTokens(t, browser, client);
    const other = await registerClient(t);
    const stolen = await refresh(first.refresh_token, { client_id: other.clientId, client_secret: other.secret });
    assert.equal(stolen.statusCode, 400);
    assert.equal(stolen.json().error, 'invalid_grant');
    const anonymous = await refresh(first.refresh_token, { client_id: undefined, client_secret: undefined });
    assert.equal(anonymous.json().error, 'invalid_grant');
    const badSecret = await refresh(first.refresh_token, { client_secret: 'nope' });
    assert.equal(badSecret.statusCode, 401);
    assert.equal(badSecret.json().error, 'invalid_client');
    // None of the refusals used the token up.
    assert.equal((await refresh(first.refresh_token, {}, {})).statusCode, 200);
  });

  it('accepts HTTP Basic client credentials', async () => {
    const first = await obtainTokens(t, browser, client);
    const res = await refresh(first.refresh_token, { client_id: undefined, client_secret: undefined }, { authorization: basicAuth(client.clientId, client.secret) });
    assert.equal(res.statusCode, 200);
  });

  it('narrows scopes on request, never widens them', async () => {
    const first = await obtainTokens(t, browser, client, 'api read_user');
    const wider = await refresh(first.refresh_token, { scope: 'api read_user openid' });
    assert.equal(wider.statusCode, 400);
    assert.deepEqual(wider.json(), { error: 'invalid_scope', error_description: 'The requested scope is invalid, unknown, or malformed.' });
    const narrower = await refresh(first.refresh_token, { scope: 'read_user' });
    assert.equal(narrower.statusCode, 200);
    assert.equal(narrower.json().scope, 'read_user');
  });

  it('answers a missing, unknown or revoked refresh token', async () => {
    const missing = await refresh(undefined);
    assert.deepEqual(missing.json(), { error: 'invalid_request', error_description: 'Missing required parameter: refresh_token.' });
    assert.equal(missing.statusCode, 400);
    const unknown = await refresh('0'.repeat(64));
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error, 'invalid_grant');
  });

  it('refreshes a public client with its client_id alone, with an id_token (no nonce) for openid', async () => {
    const pub = await registerClient(t, { confidential: false });
    const first = await obtainTokens(t, browser, { ...pub, secret: '' }, 'openid api');
    const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: pub.clientId });
    assert.equal(res.statusCode, 200);
    const idToken = res.json().id_token as string;
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1], 'base64url').toString());
    assert.equal(claims.aud, pub.clientId);
    assert.equal(claims.nonce, undefined);
  });
});
