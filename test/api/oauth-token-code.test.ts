import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { basicAuth, obtainCode, REDIRECT_URI, registerClient, signedInBrowser, tokenRequest, type Browser, type TestClient } from '../helpers/oauth.ts';

const s256 = (v: string) => crypto.createHash('sha256').update(v).digest('base64url');
const DOORKEEPER_INVALID_GRANT = 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.';

function assertOAuthError(res: { statusCode: number; json(): any; headers: Record<string, unknown> }, status: number, error: string, description?: string): void {
  assert.equal(res.statusCode, status, JSON.stringify(res.json()));
  const body = res.json();
  assert.equal(body.error, error);
  if (description) assert.equal(body.error_description, description);
  assert.deepEqual(Object.keys(body), ['error', 'error_description']);
  assert.equal(res.headers['cache-control'], 'no-store, no-cache');
  assert.match(res.headers['www-authenticate'] as string, new RegExp(`^Bearer realm="Doorkeeper", error="${error}"`));
}

describe('POST /oauth/token, grant_type=authorization_code', () => {
  let t: TestApp;
  let browser: Browser;
  let client: TestClient;
  const exchange = (code: string, extra: Record<string, string | undefined> = {}, headers: Record<string, string> = {}) =>
    tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: client.secret, ...extra }, headers);

  before(async () => {
    t = await startTestApp();
    browser = await signedInBrowser(t, await createUser(t.db));
    client = await registerClient(t);
  });
  after(async () => { await t.close(); });

  it('answers the spec token response, never cached, and the token works on the API', async () => {
    const res = await exchange(await obtainCode(t, browser, client, { scope: 'api read_user' }));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'no-store, no-cache');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
    assert.match(body.access_token, /^[0-9a-f]{64}$/);
    assert.match(body.refresh_token, /^[0-9a-f]{64}$/);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 7200);
    assert.equal(body.scope, 'api read_user');
    assert.ok(Math.abs(body.created_at - Date.now() / 1000) < 5);
    const row = await t.db.selectFrom('oauth_access_tokens').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.notEqual(row.token_digest, body.access_token);
    assert.equal(row.application_id, client.application.id);
    const me = await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(me.statusCode, 200);
    const viaParam = await t.request({ url: `/api/v4/user?access_token=${body.access_token}` });
    assert.equal(viaParam.statusCode, 200);
  });

  it('accepts client credentials by HTTP Basic', async () => {
    const code = await obtainCode(t, browser, client);
    const res = await exchange(code, { client_id: undefined, client_secret: undefined }, { authorization: basicAuth(client.clientId, client.secret) });
    assert.equal(res.statusCode, 200);
  });

  it('refuses a replayed code, and revokes the tokens issued from it', async () => {
    const code = await obtainCode(t, browser, client);
    const first = await exchange(code);
    assert.equal(first.statusCode, 200);
    const replay = await exchange(code);
    assertOAuthError(replay, 400, 'invalid_grant', DOORKEEPER_INVALID_GRANT);
    const api = await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${first.json().access_token}` } });
    assert.equal(api.statusCode, 401);
    const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.json().refresh_token, client_id: client.clientId, client_secret: client.secret });
    assertOAuthError(refresh, 400, 'invalid_grant');
  });

  it('issues one token when the same code is exchanged concurrently', async () => {
    const code = await obtainCode(t, browser, client);
    const results = await Promise.all([exchange(code), exchange(code), exchange(code)]);
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
    assert.equal(results.filter((r) => r.statusCode === 400).length, 2);
  });

  it('binds the code to its redirect URI', async () => {
    const code = await obtainCode(t, browser, client);
    assertOAuthError(await exchange(code, { redirect_uri: 'https://client.example/other' }), 400, 'invalid_grant', DOORKEEPER_INVALID_GRANT);
    assertOAuthError(await exchange(code, { redirect_uri: undefined }), 400, 'invalid_request', 'Missing required parameter: redirect_uri.');
    assert.equal((await exchange(code)).statusCode, 200);
  });

  it('binds the code to its client: another application cannot use it', async () => {
    const other = await registerClient(t);
    const code = await obtainCode(t, browser, client);
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: other.clientId, client_secret: other.secret });
    assertOAuthError(res, 400, 'invalid_grant');
    assert.equal((await exchange(code)).statusCode, 200);
  });

  it('authenticates the client: unknown, wrong secret, missing secret of a confidential client', async () => {
    const code = await obtainCode(t, browser, client);
    const text = 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.';
    assertOAuthError(await exchange(code, { client_id: 'unknown' }), 401, 'invalid_client', text);
    assertOAuthError(await exchange(code, { client_secret: 'wrong' }), 401, 'invalid_client', text);
    assertOAuthError(await exchange(code, { client_secret: undefined }), 401, 'invalid_client', text);
    assertOAuthError(await exchange(code, { client_id: undefined, client_secret: undefined }), 401, 'invalid_client', text);
    assertOAuthError(await exchange(code, {}, { authorization: basicAuth(client.clientId, 'wrong') }), 401, 'invalid_client');
    assert.equal((await exchange(code)).statusCode, 200);
  });

  it('refuses an unknown or expired code', async () => {
    assertOAuthError(await exchange('f'.repeat(64)), 400, 'invalid_grant');
    assertOAuthError(await exchange(''), 400, 'invalid_request', 'Missing required parameter: code.');
    const code = await obtainCode(t, browser, client);
    await t.db.updateTable('oauth_access_grants').set({ created_at: new Date(Date.now() - 601_000).toISOString() })
      .where('revoked_at', 'is', null).execute();
    assertOAuthError(await exchange(code), 400, 'invalid_grant');
  });

  it('PKCE S256: requires the verifier, refuses a wrong one, accepts the right one', async () => {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const code = await obtainCode(t, browser, client, { code_challenge: s256(verifier), code_challenge_method: 'S256' });
    assertOAuthError(await exchange(code), 400, 'invalid_request', 'Missing required parameter: code_verifier.');
    assertOAuthError(await exchange(code, { code_verifier: crypto.randomBytes(32).toString('base64url') }), 400, 'invalid_grant');
    assertOAuthError(await exchange(code, { code_verifier: s256(verifier) }), 400, 'invalid_grant');
    assertOAuthError(await exchange(code, { code_verifier: 'short' }), 400, 'invalid_grant');
    assert.equal((await exchange(code, { code_verifier: verifier })).statusCode, 200);
  });

  it('PKCE plain, and a public client identified by client_id alone', async () => {
    const pub = await registerClient(t, { confidential: false });
    const verifier = crypto.randomBytes(48).toString('base64url');
    const code = await obtainCode(t, browser, pub, { code_challenge: verifier, code_challenge_method: 'plain' });
    const req = (v: string) => tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: pub.clientId, code_verifier: v });
    assertOAuthError(await req(`${verifier}x`), 400, 'invalid_grant');
    const ok = await req(verifier);
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.json().refresh_token);
  });

  it('refuses a PKCE downgrade: a verifier for a code issued without a challenge', async () => {
    const code = await obtainCode(t, browser, client);
    assertOAuthError(await exchange(code, { code_verifier: crypto.randomBytes(32).toString('base64url') }), 400, 'invalid_grant');
  });

  it('answers missing and unsupported grant types', async () => {
    assertOAuthError(await tokenRequest(t, {}), 400, 'invalid_request', 'Missing required parameter: grant_type.');
    for (const g of ['client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code', 'constructor']) {
      assertOAuthError(await tokenRequest(t, { grant_type: g }), 400, 'unsupported_grant_type',
        'The authorization grant type is not supported by the authorization server.');
    }
  });

  it('accepts a JSON body too', async () => {
    const code = await obtainCode(t, browser, client);
    const res = await t.request({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: client.secret } });
    assert.equal(res.statusCode, 200);
  });

  it('issues an id_token only with the openid scope', async () => {
    const withOpenid = await exchange(await obtainCode(t, browser, client, { scope: 'openid' }));
    assert.equal(typeof withOpenid.json().id_token, 'string');
    const without = await exchange(await obtainCode(t, browser, client, { scope: 'api' }));
    assert.equal(without.json().id_token, undefined);
  });
});
