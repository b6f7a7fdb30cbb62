import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { postForm, registerClient, signedInBrowser, type Browser } from '../helpers/oauth.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('/profile/applications', () => {
  let t: TestApp;
  let user: UserRow;
  let browser: Browser;
  const register = (fields: Record<string, string | undefined>, b: Browser = browser) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) p.append(k.replace(/\[\]#\d+$/, '[]'), v);
    return t.request({ method: 'POST', url: '/profile/applications', payload: p.toString(), headers: { cookie: b.cookie, 'content-type': 'application/x-www-form-urlencoded' } });
  };
  const valid = () => ({
    authenticity_token: browser.csrf,
    'doorkeeper_application[name]': 'My <script>app</script>',
    'doorkeeper_application[redirect_uri]': 'https://app.example/cb\nhttp://127.0.0.1/cb',
    'doorkeeper_application[confidential]': '1',
    'doorkeeper_application[scopes][]#1': 'api',
    'doorkeeper_application[scopes][]#2': 'openid',
  });

  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db);
    browser = await signedInBrowser(t, user);
  });
  after(async () => { await t.close(); });

  it('sends anonymous browsers to sign in and back', async () => {
    const res = await t.request({ url: '/profile/applications' });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/users/sign_in?return_to=${encodeURIComponent('/profile/applications')}`);
  });

  it('lists nothing at first and offers the registration form', async () => {
    const res = await t.request({ url: '/profile/applications', headers: { cookie: browser.cookie } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(res.body, /You don't have any applications\./);
    assert.match(res.body, /name="doorkeeper_application\[name\]"/);
    assert.match(res.body, /name="doorkeeper_application\[scopes\]\[\]" value="read_user"/);
  });

  it('registers an application, shows its secret once, and stores only the digest', async () => {
    const res = await register(valid());
    assert.equal(res.statusCode, 201);
    const uid = /id="application_id">([0-9a-f]{64})</.exec(res.body)![1];
    const secret = /id="secret">([0-9a-f]{64})</.exec(res.body)![1];
    assert.match(res.body, /My &lt;script&gt;app&lt;\/script&gt;/);
    const row = await t.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirstOrThrow();
    assert.equal(row.owner_id, user.id);
    assert.equal(row.secret_digest, digest(secret));
    assert.equal(row.scopes, 'api openid');
    assert.equal(row.confidential, 1);
    assert.equal(row.redirect_uri, 'https://app.example/cb\nhttp://127.0.0.1/cb');
    const show = await t.request({ url: `/profile/applications/${row.id}`, headers: { cookie: browser.cookie } });
    assert.equal(show.statusCode, 200);
    assert.ok(show.body.includes(uid));
    assert.ok(!show.body.includes(secret));
    const list = await t.request({ url: '/profile/applications', headers: { cookie: browser.cookie } });
    assert.ok(list.body.includes(`/profile/applications/${row.id}`));
    assert.ok(!list.body.includes(secret));
  });

  it('registers a public application when the confidential box is unchecked', async () => {
    const res = await register({ ...valid(), 'doorkeeper_application[confidential]': '0' });
    const uid = /id="application_id">([0-9a-f]{64})</.exec(res.body)![1];
    const row = await t.db.selectFrom('oauth_applications').select('confidential').where('uid', '=', uid).executeTakeFirstOrThrow();
    assert.equal(row.confidential, 0);
  });

  it('shows validation errors and keeps what was typed', async () => {
    const res = await register({ ...valid(), 'doorkeeper_application[name]': '', 'doorkeeper_application[redirect_uri]': 'not a uri', 'doorkeeper_application[scopes][]#1': undefined, 'doorkeeper_application[scopes][]#2': undefined });
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /Name can&#39;t be blank/);
    assert.match(res.body, /Redirect URI must be an absolute URI\./);
    assert.match(res.body, /Scopes can&#39;t be blank/);
    assert.match(res.body, />not a uri<\/textarea>/);
  });

  it('refuses every write without the session CSRF token', async () => {
    const before = (await t.db.selectFrom('oauth_applications').select('id').execute()).length;
    const res = await register({ ...valid(), authenticity_token: undefined });
    assert.equal(res.statusCode, 422);
    const client = await registerClient(t, { ownerId: user.id });
    for (const action of ['renew', 'delete']) {
      const r = await postForm(t, `/profile/applications/${client.application.id}/${action}`, {}, { cookie: browser.cookie });
      assert.equal(r.statusCode, 422);
    }
    assert.equal((await t.db.selectFrom('oauth_applications').select('id').execute()).length, before + 1);
  });

  it('renews the secret: the new one is shown once, the old one stops authenticating', async () => {
    const client = await registerClient(t, { ownerId: user.id });
    const res = await postForm(t, `/profile/applications/${client.application.id}/renew`, { authenticity_token: browser.csrf }, { cookie: browser.cookie });
    assert.equal(res.statusCode, 200);
    const secret = /id="secret">([0-9a-f]{64})</.exec(res.body)![1];
    assert.notEqual(secret, client.secret);
    const row = await t.db.selectFrom('oauth_applications').select('secret_digest').where('id', '=', client.application.id).executeTakeFirstOrThrow();
    assert.equal(row.secret_digest, digest(secret));
    const old = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://client.example/callback', client_id: client.clientId, client_secret: client.secret });
    assert.equal(old.json().error, 'invalid_client');
  });

  it('deletes an application', async () => {
    const client = await registerClient(t, { ownerId: user.id });
    const res = await postForm(t, `/profile/applications/${client.application.id}/delete`, { authenticity_token: browser.csrf }, { cookie: browser.cookie });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/profile/applications');
    assert.equal(await t.db.selectFrom('oauth_applications').select('id').where('id', '=', client.application.id).executeTakeFirst(), undefined);
  });

  it('treats another user\'s application as not found', async () => {
    const stranger = await signedInBrowser(t, await createUser(t.db));
    const client = await registerClient(t, { ownerId: user.id });
    assert.equal((await t.request({ url: `/profile/applications/${client.application.id}`, headers: { cookie: stranger.cookie } })).statusCode, 404);
    for (const action of ['renew', 'delete']) {
      const r = await postForm(t, `/profile/applications/${client.application.id}/${action}`, { authenticity_token: stranger.csrf }, { cookie: stranger.cookie });
      assert.equal(r.statusCode, 404);
    }
    const row = await t.db.selectFrom('oauth_applications').select('secret_digest').where('id', '=', client.application.id).executeTakeFirstOrThrow();
    assert.equal(row.secret_digest, digest(client.secret));
    const list = await t.request({ url: '/profile/applications', headers: { cookie: stranger.cookie } });
    assert.ok(!list.body.includes(`/profile/applications/${client.application.id}"`));
  });
});
