import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, importJWK, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createOauthToken, createToken, createUser } from '../helpers/factories.ts';
import { obtainTokens, postForm, registerClient, signedInBrowser, type Browser, type TestClient } from '../helpers/oauth.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('token info, revoke, userinfo, discovery, keys and CORS', () => {
  let t: TestApp;
  let user: UserRow;
  let browser: Browser;
  let confidential: TestClient;
  let publicClient: TestClient;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db, { name: 'Ada Lovelace', public_email: null, website_url: 'ada.example' });
    browser = await signedInBrowser(t, user);
    confidential = await registerClient(t);
    publicClient = await registerClient(t, { confidential: false });
  });
  after(async () => { await t.close(); });

  it('GET /oauth/token/info describes a live token, by header or access_token parameter', async () => {
    const tokens = await obtainTokens(t, browser, confidential, 'api read_user');
    for (const res of [
      await t.request({ url: '/oauth/token/info', headers: bearer(tokens.access_token) }),
      await t.request({ url: `/oauth/token/info?access_token=${tokens.access_token}` }),
    ]) {
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['resource_owner_id', 'scope', 'expires_in', 'application', 'created_at', 'scopes', 'expires_in_seconds']);
      assert.equal(body.resource_owner_id, user.id);
      assert.deepEqual(body.scope, ['api', 'read_user']);
      assert.deepEqual(body.scopes, body.scope);
      assert.ok(body.expires_in > 7190 && body.expires_in <= 7200);
      assert.equal(body.expires_in_seconds, body.expires_in);
      assert.deepEqual(body.application, { uid: confidential.clientId });
      assert.equal(body.created_at, tokens.created_at);
    }
  });

  it('token info answers 401 invalid_token for missing, unknown, expired and revoked tokens', async () => {
    const expired = await createOauthToken(t.db, user, { createdAt: new Date(Date.now() - 8000_000).toISOString() });
    const revoked = await createOauthToken(t.db, user, { revoked: true });
    for (const headers of [{}, bearer('f'.repeat(64)), bearer(expired), bearer(revoked)]) {
      const res = await t.request({ url: '/oauth/token/info', headers });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' });
      assert.match(res.headers['www-authenticate'] as string, /^Bearer realm="Doorkeeper", error="invalid_token"/);
    }
  });

  it('POST /oauth/revoke answers {} for an unknown token and 400 without one', async () => {
    const res = await postForm(t, '/oauth/revoke', { token: 'nope', client_id: confidential.clientId, client_secret: confidential.secret });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{}');
    const missing = await postForm(t, '/oauth/revoke', { client_id: confidential.clientId, client_secret: confidential.secret });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { error: 'invalid_request', error_description: 'Missing required parameter: token.' });
  });

  it('revokes a confidential application\'s token only for that application, authenticated', async () => {
    const tokens = await obtainTokens(t, browser, confidential);
    const other = await registerClient(t);
    const forbiddenBody = { error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' };
    for (const fields of [
      { client_id: undefined, client_secret: undefined },
      { client_id: confidential.clientId, client_secret: 'wrong' },
      { client_id: confidential.clientId, client_secret: undefined },
      { client_id: other.clientId, client_secret: other.secret },
    ]) {
      const res = await postForm(t, '/oauth/revoke', { token: tokens.access_token, ...fields });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), forbiddenBody);
    }
    assert.equal((await t.request({ url: '/api/v4/user', headers: bearer(tokens.access_token) })).statusCode, 200);
    const ok = await postForm(t, '/oauth/revoke', { token: tokens.access_token, client_id: confidential.clientId, client_secret: confidential.secret });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.body, '{}');
    assert.equal((await t.request({ url: '/api/v4/user', headers: bearer(tokens.access_token) })).statusCode, 401);
    // Access and refresh token are one row: the refresh token went with it.
    const refresh = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: confidential.clientId, client_secret: confidential.secret });
    assert.equal(refresh.json().error, 'invalid_grant');
  });

  it('revokes by refresh token, with token_type_hint, and public or client-less tokens without credentials', async () => {
    const tokens = await obtainTokens(t, browser, { ...publicClient, secret: '' });
    const res = await postForm(t, '/oauth/revoke', { token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    assert.equal(res.statusCode, 200);
    assert.equal((await t.request({ url: '/api/v4/user', headers: bearer(tokens.access_token) })).statusCode, 401);
    const row = await t.db.selectFrom('oauth_access_tokens').select('revoked_at').where('application_id', '=', publicClient.application.id).executeTakeFirstOrThrow();
    assert.notEqual(row.revoked_at, null);
    const again = await postForm(t, '/oauth/revoke', { token: tokens.access_token });
    assert.equal(again.statusCode, 200);
  });

  it('GET and POST /oauth/userinfo answer the claims of a token with openid', async () => {
    const tokens = await obtainTokens(t, browser, confidential, 'openid email');
    for (const res of [
      await t.request({ url: '/oauth/userinfo', headers: bearer(tokens.access_token) }),
      await t.request({ method: 'POST', url: '/oauth/userinfo', headers: bearer(tokens.access_token) }),
      await postForm(t, '/oauth/userinfo', { access_token: tokens.access_token }),
    ]) {
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.sub, String(user.id));
      assert.match(body.sub_legacy, /^[0-9a-f]{64}$/);
      assert.equal(body.name, 'Ada Lovelace');
      assert.equal(body.nickname, user.username);
      assert.equal(body.preferred_username, user.username);
      assert.equal(body.email, user.email);
      assert.equal(body.email_verified, true);
      assert.equal(body.website, 'http://ada.example');
      assert.equal(body.profile, `http://kiln.test/${user.username}`);
      assert.equal('picture' in body, false);
    }
  });

  it('userinfo: 401 for a bad token, 403 insufficient_scope without openid, no email without the email scope or a public one', async () => {
    const unknown = await t.request({ url: '/oauth/userinfo', headers: bearer('0'.repeat(64)) });
    assert.equal(unknown.statusCode, 401);
    assert.equal(unknown.json().error, 'invalid_token');
    const revoked = await createOauthToken(t.db, user, { scopes: ['openid'], revoked: true });
    const r = await t.request({ url: '/oauth/userinfo', headers: bearer(revoked) });
    assert.equal(r.json().error_description, 'The access token was revoked');
    const apiOnly = await createOauthToken(t.db, user, { scopes: ['api'] });
    const noScope = await t.request({ url: '/oauth/userinfo', headers: bearer(apiOnly) });
    assert.equal(noScope.statusCode, 403);
    assert.deepEqual(noScope.json(), { error: 'insufficient_scope', error_description: 'Access to this resource requires scope "openid".' });
    const openidOnly = await createOauthToken(t.db, user, { scopes: ['openid'] });
    const body = (await t.request({ url: '/oauth/userinfo', headers: bearer(openidOnly) })).json();
    assert.equal(body.email, undefined);
    assert.equal(body.email_verified, undefined);
  });

  it('publishes the discovery document, naming this server as issuer', async () => {
    const res = await t.request({ url: '/.well-known/openid-configuration' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.issuer, 'http://kiln.test');
    assert.equal(doc.authorization_endpoint, 'http://kiln.test/oauth/authorize');
    assert.equal(doc.token_endpoint, 'http://kiln.test/oauth/token');
    assert.equal(doc.revocation_endpoint, 'http://kiln.test/oauth/revoke');
    assert.equal(doc.userinfo_endpoint, 'http://kiln.test/oauth/userinfo');
    assert.equal(doc.jwks_uri, 'http://kiln.test/oauth/discovery/keys');
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.code_challenge_methods_supported, ['plain', 'S256']);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
    assert.ok(doc.grant_types_supported.includes('refresh_token'));
    assert.ok(doc.scopes_supported.includes('openid'));
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const cors = await t.request({ url: '/.well-known/openid-configuration', headers: { origin: 'https://spa.example' } });
    assert.equal(cors.headers['access-control-allow-origin'], '*');
  });

  it('publishes two RS256 keys kept under the data directory; id_tokens name theirs by kid and verify', async () => {
    const res = await t.request({ url: '/oauth/discovery/keys' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'max-age=86400, public, must-revalidate, no-transform');
    const { keys } = res.json();
    assert.equal(keys.length, 2);
    for (const k of keys) {
      assert.deepEqual(Object.keys(k).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
      assert.equal(k.kty, 'RSA');
      assert.equal(k.alg, 'RS256');
      assert.equal(k.use, 'sig');
    }
    assert.notEqual(keys[0].kid, keys[1].kid);
    const tokens = await obtainTokens(t, browser, confidential, 'openid');
    const header = JSON.parse(Buffer.from((tokens.id_token as string).split('.')[0], 'base64url').toString());
    const key = keys.find((k: { kid: string }) => k.kid === header.kid);
    assert.ok(key, 'the id_token names a published key');
    const { payload } = await jwtVerify(tokens.id_token as string, await importJWK(key, 'RS256'), { issuer: 'http://kiln.test', audience: confidential.clientId });
    assert.equal(payload.sub, String(user.id));
    assert.equal(payload.exp! - payload.iat!, 120);
    const fs = await import('node:fs');
    assert.ok(fs.existsSync(`${t.dataDir}/keys/oidc.pem`));
    assert.ok(fs.existsSync(`${t.dataDir}/keys/ci_jwt.pem`));
  });

  it('group claims: groups and the role claims in userinfo, groups_direct in the id_token', async () => {
    const OWNER = 'https://gitlab.org/claims/groups/owner';
    const MAINTAINER = 'https://gitlab.org/claims/groups/maintainer';
    const DEVELOPER = 'https://gitlab.org/claims/groups/developer';
    const member = await createUser(t.db);
    const memberBrowser = await signedInBrowser(t, member);
    const claimsNow = async () => {
      const tokens = await obtainTokens(t, memberBrowser, confidential, 'openid');
      const info = (await t.request({ url: '/oauth/userinfo', headers: bearer(tokens.access_token) })).json();
      return { info, idToken: decodeJwt(tokens.id_token as string) };
    };
    // Without any membership: empty lists, and no role claim at all.
    const none = await claimsNow();
    assert.deepEqual(none.info.groups, []);
    for (const claim of [OWNER, MAINTAINER, DEVELOPER]) assert.equal(claim in none.info, false, claim);
    assert.deepEqual(none.idToken.groups_direct, []);
    assert.equal('groups' in none.idToken, false);

    const creator = await createUser(t.db);
    const creatorToken = await createToken(t.db, creator);
    const group = async (path: string, level: number | null, parentId?: number) => {
      const res = await t.request({ method: 'POST', url: '/api/v4/groups', token: creatorToken, payload: { name: path, path, ...(parentId ? { parent_id: parentId } : {}) } });
      assert.equal(res.statusCode, 201, res.body);
      const g = res.json();
      if (level !== null) {
        const added = await t.request({ method: 'POST', url: `/api/v4/groups/${g.id}/members`, token: creatorToken, payload: { user_id: member.id, access_level: level } });
        assert.equal(added.statusCode, 201, added.body);
      }
      return g;
    };
    const top = await group('oidc-top', 50);
    await group('sub', null, top.id);
    await group('oidc-maint', 40);
    await group('oidc-dev', 30);
    await group('oidc-rep', 20);
    await group('oidc-elsewhere', null);

    const { info, idToken } = await claimsNow();
    assert.deepEqual(info.groups, ['oidc-top', 'oidc-top/sub', 'oidc-maint', 'oidc-dev', 'oidc-rep']);
    assert.deepEqual(info[OWNER], ['oidc-top']);
    assert.deepEqual(info[MAINTAINER], ['oidc-maint']);
    assert.deepEqual(info[DEVELOPER], ['oidc-dev']);
    assert.equal('groups_direct' in info, false);
    assert.deepEqual(idToken.groups_direct, ['oidc-top', 'oidc-maint', 'oidc-dev', 'oidc-rep']);
    for (const claim of ['groups', OWNER, MAINTAINER, DEVELOPER]) assert.equal(claim in idToken, false, claim);

    const doc = (await t.request({ url: '/.well-known/openid-configuration' })).json();
    for (const claim of ['groups', 'groups_direct', OWNER, MAINTAINER, DEVELOPER]) assert.ok(doc.claims_supported.includes(claim), claim);
  });

  it('CORS preflights: Authorization allowed, X-Requested-With refused, on token, revoke and userinfo', async () => {
    for (const [url, method] of [['/oauth/token', 'POST'], ['/oauth/revoke', 'POST'], ['/oauth/userinfo', 'GET'], ['/oauth/userinfo', 'POST']]) {
      const ok = await t.request({ method: 'OPTIONS', url, headers: { origin: 'https://spa.example', 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' } });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.body, '');
      assert.equal(ok.headers['access-control-allow-origin'], '*');
      assert.match(ok.headers['access-control-allow-methods'] as string, new RegExp(method));
      assert.equal(ok.headers['access-control-allow-headers'], 'authorization, content-type');
      assert.equal(ok.headers['access-control-max-age'], '7200');
      assert.equal(ok.headers['access-control-allow-credentials'], undefined);
      const refused = await t.request({ method: 'OPTIONS', url, headers: { origin: 'https://spa.example', 'access-control-request-method': method, 'access-control-request-headers': 'x-requested-with' } });
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
      assert.equal(refused.headers['access-control-allow-headers'], undefined);
    }
    const wrongMethod = await t.request({ method: 'OPTIONS', url: '/oauth/token', headers: { origin: 'https://spa.example', 'access-control-request-method': 'DELETE' } });
    assert.equal(wrongMethod.headers['access-control-allow-origin'], undefined);
    const actual = await t.request({ method: 'POST', url: '/oauth/token', headers: { origin: 'https://spa.example' }, payload: {} });
    assert.equal(actual.headers['access-control-allow-origin'], '*');
  });
});
