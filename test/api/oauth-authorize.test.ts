import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import {
  approve, authorizeQuery, postForm, REDIRECT_URI, registerClient, signedInBrowser, type Browser, type TestClient,
} from '../helpers/oauth.ts';

describe('/oauth/authorize', () => {
  let t: TestApp;
  let browser: Browser;
  let client: TestClient;
  const base = () => ({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api read_user', state: 'xyz-state' });
  const get = (fields: Record<string, string | undefined>, b: Browser | null = browser) =>
    t.request({ url: authorizeQuery(fields), headers: b ? { cookie: b.cookie } : {} });

  before(async () => {
    t = await startTestApp();
    browser = await signedInBrowser(t, await createUser(t.db));
    client = await registerClient(t, { name: 'Dashboard <b>&</b>' });
  });
  after(async () => { await t.close(); });

  it('sends an anonymous browser to sign in, keeping the request to come back to', async () => {
    const res = await get(base(), null);
    assert.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string, 'http://kiln.test');
    assert.equal(location.pathname, '/users/sign_in');
    assert.equal(location.searchParams.get('return_to'), authorizeQuery(base()));
  });

  it('shows the consent page with the escaped application name, the scopes, Authorize and Deny, framing denied', async () => {
    const res = await get(base());
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(res.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.match(res.body, /Dashboard &lt;b&gt;&amp;&lt;\/b&gt;/);
    assert.doesNotMatch(res.body, /<b>&<\/b>/);
    assert.match(res.body, /<strong>api<\/strong>/);
    assert.match(res.body, /<strong>read_user<\/strong>/);
    assert.match(res.body, /value="Authorize"/);
    assert.match(res.body, /value="Deny"/);
    assert.match(res.body, new RegExp(`name="authenticity_token" value="${browser.csrf}"`));
  });

  it('redirects with a code and the state echoed verbatim on approval (303, never 307)', async () => {
    const res = await postForm(t, '/oauth/authorize', { ...base(), state: 'a b&c=d', authenticity_token: browser.csrf }, { cookie: browser.cookie });
    assert.equal(res.statusCode, 303);
    const location = new URL(res.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    assert.match(location.searchParams.get('code')!, /^[0-9a-f]{64}$/);
    assert.equal(location.searchParams.get('state'), 'a b&c=d');
    const grants = await t.db.selectFrom('oauth_access_grants').selectAll().where('application_id', '=', client.application.id).execute();
    assert.equal(grants.length, 1);
    assert.notEqual(grants[0].code_digest, location.searchParams.get('code'));
    assert.equal(grants[0].scopes, 'api read_user');
    assert.equal(grants[0].expires_in, 600);
  });

  it('redirects with access_denied when the user denies (form _method=delete and DELETE)', async () => {
    for (const res of [
      await postForm(t, '/oauth/authorize', { ...base(), _method: 'delete', authenticity_token: browser.csrf }, { cookie: browser.cookie }),
      await t.request({
        method: 'DELETE', url: '/oauth/authorize', payload: new URLSearchParams({ ...base(), authenticity_token: browser.csrf }).toString(),
        headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    ]) {
      assert.equal(res.statusCode, 303);
      const location = new URL(res.headers.location as string);
      assert.equal(location.searchParams.get('error'), 'access_denied');
      assert.equal(location.searchParams.get('error_description'), 'The resource owner or authorization server denied the request.');
      assert.equal(location.searchParams.get('state'), 'xyz-state');
      assert.equal(location.searchParams.get('code'), null);
    }
  });

  it('rejects a decision without, or with a wrong, CSRF token and issues no code', async () => {
    const before = await t.db.selectFrom('oauth_access_grants').select('id').execute();
    for (const token of [undefined, 'forged', (await signedInBrowser(t, await createUser(t.db))).csrf]) {
      const res = await postForm(t, '/oauth/authorize', { ...base(), authenticity_token: token }, { cookie: browser.cookie });
      assert.equal(res.statusCode, 422);
      assert.match(res.body, /Can&#39;t verify CSRF token authenticity\./);
    }
    assert.equal((await t.db.selectFrom('oauth_access_grants').select('id').execute()).length, before.length);
  });

  it('lets a trusted application skip consent', async () => {
    const trusted = await registerClient(t, { trusted: true });
    const res = await get({ ...base(), client_id: trusted.clientId });
    assert.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    assert.match(location.searchParams.get('code')!, /^[0-9a-f]{64}$/);
    assert.equal(location.searchParams.get('state'), 'xyz-state');
  });

  it('shows an error page, never a redirect, for a missing or unknown client or a bad redirect URI', async () => {
    const cases: [Record<string, string | undefined>, number, string, string][] = [
      [{ ...base(), client_id: undefined }, 400, 'invalid_request', 'Missing required parameter: client_id.'],
      [{ ...base(), client_id: 'nope' }, 401, 'invalid_client', 'Client authentication failed'],
      [{ ...base(), redirect_uri: undefined }, 400, 'invalid_redirect_uri', 'The redirect URI included is not valid.'],
      [{ ...base(), redirect_uri: 'https://evil.example/callback' }, 400, 'invalid_redirect_uri', 'The redirect URI included is not valid.'],
      [{ ...base(), redirect_uri: `${REDIRECT_URI}/extra` }, 400, 'invalid_redirect_uri', 'The redirect URI included is not valid.'],
      [{ ...base(), redirect_uri: `${REDIRECT_URI}?next=https://evil.example` }, 400, 'invalid_redirect_uri', 'The redirect URI included is not valid.'],
      [{ ...base(), redirect_uri: 'https://CLIENT.example/callback' }, 400, 'invalid_redirect_uri', 'The redirect URI included is not valid.'],
    ];
    for (const [fields, status, error, text] of cases) {
      const res = await get(fields);
      assert.equal(res.statusCode, status, error);
      assert.equal(res.headers.location, undefined);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.match(res.body, new RegExp(error));
      assert.ok(res.body.includes(text), text);
    }
  });

  it('redirects the later errors back to the client with state', async () => {
    const cases: [Record<string, string | undefined>, string, string][] = [
      [{ ...base(), response_type: undefined }, 'invalid_request', 'Missing required parameter: response_type.'],
      [{ ...base(), response_type: 'id_token' }, 'unsupported_response_type', 'The authorization server does not support this response type.'],
      [{ ...base(), scope: 'api admin_everything' }, 'invalid_scope', 'The requested scope is invalid, unknown, or malformed.'],
      [{ ...base(), scope: 'sudo' }, 'invalid_scope', 'The requested scope is invalid, unknown, or malformed.'],
      [{ ...base(), code_challenge: 'x'.repeat(43) }, 'invalid_code_challenge_method', 'The code challenge method must be plain or S256.'],
      [{ ...base(), code_challenge: 'x'.repeat(43), code_challenge_method: 'S512' }, 'invalid_code_challenge_method', 'The code challenge method must be plain or S256.'],
      [{ ...base(), response_mode: 'form_post' }, 'unsupported_response_mode', 'The authorization server does not support this response mode.'],
    ];
    for (const [fields, error, description] of cases) {
      const res = await get(fields);
      assert.equal(res.statusCode, 302, error);
      const location = new URL(res.headers.location as string);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
      assert.equal(location.searchParams.get('error'), error);
      assert.equal(location.searchParams.get('error_description'), description);
      assert.equal(location.searchParams.get('state'), 'xyz-state');
    }
  });

  it('refuses the removed implicit grant, answering in the fragment', async () => {
    const res = await get({ ...base(), response_type: 'token' });
    assert.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    assert.equal(location.search, '');
    const fragment = new URLSearchParams(location.hash.slice(1));
    assert.equal(fragment.get('error'), 'unsupported_response_type');
    assert.equal(fragment.get('state'), 'xyz-state');
    assert.equal(fragment.get('access_token'), null);
  });

  it('defaults an omitted scope to api within the application, and asks for a scope when none is left', async () => {
    const res = await get({ ...base(), scope: undefined });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /name="scope" value="api"/);
    const readOnly = await registerClient(t, { scopes: ['read_user'] });
    const none = await get({ ...base(), client_id: readOnly.clientId, scope: undefined });
    const location = new URL(none.headers.location as string);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('error_description'), 'Missing required parameter: scope.');
  });

  it('validates again on submit: tampered hidden fields get no code', async () => {
    const res = await postForm(t, '/oauth/authorize', { ...base(), redirect_uri: 'https://evil.example/', authenticity_token: browser.csrf }, { cookie: browser.cookie });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    const scoped = await postForm(t, '/oauth/authorize', { ...base(), scope: 'sudo', authenticity_token: browser.csrf }, { cookie: browser.cookie });
    assert.equal(new URL(scoped.headers.location as string).searchParams.get('error'), 'invalid_scope');
  });

  it('keeps the PKCE challenge and nonce with the code', async () => {
    const location = await approve(t, browser, { ...base(), code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', nonce: 'n-0S6_WzA2Mj' });
    assert.ok(location.searchParams.get('code'));
    const grant = await t.db.selectFrom('oauth_access_grants').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(grant.code_challenge, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    assert.equal(grant.code_challenge_method, 'S256');
    assert.equal(grant.nonce, 'n-0S6_WzA2Mj');
  });

  it('accepts any port on a registered loopback redirect URI (RFC 8252), nothing else', async () => {
    const native = await registerClient(t, { redirectUri: 'http://127.0.0.1/cb', confidential: false });
    const ok = await get({ ...base(), client_id: native.clientId, redirect_uri: 'http://127.0.0.1:53122/cb' });
    assert.equal(ok.statusCode, 200);
    const wrongPath = await get({ ...base(), client_id: native.clientId, redirect_uri: 'http://127.0.0.1:53122/other' });
    assert.equal(wrongPath.statusCode, 400);
    const localhost = await get({ ...base(), client_id: native.clientId, redirect_uri: 'http://localhost:53122/cb' });
    assert.equal(localhost.statusCode, 400);
  });

  it('offers no CORS on the authorization endpoint', async () => {
    const res = await t.request({ method: 'OPTIONS', url: '/oauth/authorize', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const get2 = await t.request({ url: authorizeQuery(base()), headers: { cookie: browser.cookie, origin: 'https://app.example' } });
    assert.equal(get2.headers['access-control-allow-origin'], undefined);
  });
});
