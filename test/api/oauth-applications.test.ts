import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { digest } from '../../src/domain/tokens/secret.ts';
import { obtainTokens, registerClient, signedInBrowser } from '../helpers/oauth.ts';

describe('/api/v4/applications', () => {
  let t: TestApp;
  let userToken: string;
  const create = (payload: Record<string, unknown>, token = ROOT_TOKEN) => t.request({ method: 'POST', url: '/api/v4/applications', token, payload });

  before(async () => {
    t = await startTestApp();
    userToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  it('creates an application and shows its secret once; only the digest is stored', async () => {
    const res = await create({ name: 'CI dashboard', redirect_uri: 'https://dash.example/cb', scopes: 'api read_user', confidential: false });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['id', 'application_id', 'application_name', 'callback_url', 'confidential', 'secret']);
    assert.equal(body.application_name, 'CI dashboard');
    assert.equal(body.callback_url, 'https://dash.example/cb');
    assert.equal(body.confidential, false);
    assert.match(body.application_id, /^[0-9a-f]{64}$/);
    assert.match(body.secret, /^[0-9a-f]{64}$/);
    const row = await t.db.selectFrom('oauth_applications').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.secret_digest, digest(body.secret));
    assert.equal(row.scopes, 'api read_user');
    assert.equal(row.owner_id, null);
    const list = await t.request({ url: '/api/v4/applications', token: ROOT_TOKEN });
    assert.equal(list.statusCode, 200);
    const listed = list.json().find((a: { id: number }) => a.id === body.id);
    assert.deepEqual(listed, { id: body.id, application_id: body.application_id, application_name: 'CI dashboard', callback_url: 'https://dash.example/cb', confidential: false });
  });

  it('defaults confidential to true', async () => {
    const res = await create({ name: 'x', redirect_uri: 'https://x.example/cb', scopes: 'api' });
    assert.equal(res.json().confidential, true);
  });

  it('answers missing and invalid parameters in the Service\'s shapes', async () => {
    const missing = await create({ redirect_uri: 'https://x.example/cb', scopes: 'api' });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: '400 Bad request - "name" not given' });
    const blankScopes = await create({ name: 'x', redirect_uri: 'https://x.example/cb', scopes: '' });
    assert.deepEqual(blankScopes.json(), { error: 'scopes is empty' });
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ name: 'x', redirect_uri: 'cb', scopes: 'api' }, { redirect_uri: ['must be an absolute URI.'] }],
      [{ name: 'x', redirect_uri: 'https://x.example/cb#frag', scopes: 'api' }, { redirect_uri: ['cannot contain a fragment.'] }],
      [{ name: 'x', redirect_uri: 'javascript:alert(1)', scopes: 'api' }, { redirect_uri: ['is forbidden by the server.'] }],
      [{ name: 'x', redirect_uri: 'https://x.example/cb', scopes: 'api superpowers' }, { scopes: ["doesn't match configured on the server."] }],
      [{ name: ' ', redirect_uri: 'https://x.example/cb', scopes: 'api' }, { name: ["can't be blank"] }],
    ];
    for (const [payload, message] of cases) {
      const res = await create(payload);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { message });
    }
  });

  it('is for administrators only, before parameter validation', async () => {
    assert.deepEqual((await create({}, userToken)).json(), { message: '403 Forbidden' });
    assert.equal((await t.request({ url: '/api/v4/applications', token: userToken })).statusCode, 403);
    assert.equal((await t.request({ method: 'DELETE', url: '/api/v4/applications/1', token: userToken })).statusCode, 403);
    assert.equal((await t.request({ url: '/api/v4/applications' })).statusCode, 401);
  });

  it('deletes an application with its tokens, which stop working at once', async () => {
    const client = await registerClient(t);
    const browser = await signedInBrowser(t, await createUser(t.db));
    const tokens = await obtainTokens(t, browser, client);
    const api = () => t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal((await api()).statusCode, 200);
    const res = await t.request({ method: 'DELETE', url: `/api/v4/applications/${client.application.id}`, token: ROOT_TOKEN });
    assert.equal(res.statusCode, 204);
    assert.equal((await api()).statusCode, 401);
    const again = await t.request({ method: 'DELETE', url: `/api/v4/applications/${client.application.id}`, token: ROOT_TOKEN });
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { message: '404 Application Not Found' });
  });

  it('does not list or delete applications users registered for themselves', async () => {
    const owner = await createUser(t.db);
    const own = await registerClient(t, { ownerId: owner.id });
    const list = (await t.request({ url: '/api/v4/applications', token: ROOT_TOKEN })).json();
    assert.equal(list.some((a: { id: number }) => a.id === own.application.id), false);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/applications/${own.application.id}`, token: ROOT_TOKEN })).statusCode, 404);
  });
});
