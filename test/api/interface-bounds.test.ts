/**
 * Ids past the column's range and text no column holds, on the interfaces outside the declared
 * parameters (issue 35, item 13), each answered in that interface's own words: git's not-found
 * text, GraphQL errors, SCIM's error shape, OAuth's and the API's 4xx. On PostgreSQL every one of
 * these reached a query before and failed there (out of range for type integer, NUL in text).
 * The fuzzer (fuzz-interfaces.test.ts) drives the same interfaces with many more values.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createCiProject } from '../helpers/ci.ts';
import { createSession } from '../helpers/factories.ts';
import { registerClient, REDIRECT_URI, type TestClient } from '../helpers/oauth.ts';
import { ERROR_URN, SCIM_JSON } from '../helpers/scim.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { MESSAGES } from '../../src/git/smart-http.ts';

const basic = (user: string, password: string | Buffer) =>
  `Basic ${Buffer.concat([Buffer.from(`${user}:`), Buffer.isBuffer(password) ? password : Buffer.from(password)]).toString('base64')}`;
const BAD_REQUEST = { message: '400 Bad request' };

describe('ids and text past their bounds outside the declared parameters', () => {
  let t: TestApp;
  let repo: string;
  let snippetId: number;
  let client: TestClient;
  let cookie: string;
  let csrf: string;
  let groupPath: string;
  let scimToken: string;

  before(async () => {
    t = await startTestApp();
    repo = (await createCiProject(t, { visibility: 'public' })).fullPath;
    const post = async (url: string, payload?: object) => (await t.request({ method: 'POST', url, token: ROOT_TOKEN, payload })).json();
    snippetId = (await post('/api/v4/snippets', { title: 's', file_name: 'a.txt', content: 'x', visibility: 'public' })).id;
    client = await registerClient(t, { ownerId: 1 });
    const root = await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const session = await createSession(t.db, root);
    cookie = `_service_session=${session}`;
    csrf = csrfTokenFor(t.app.kiln.secretKeyBase, session);
    const group = await post('/api/v4/groups', { name: 'Bounds', path: 'bounds' });
    groupPath = group.path;
    scimToken = (await post(`/api/v4/groups/${group.id}/scim_token`)).token;
  });
  after(async () => { await t.close(); });

  const git = (url: string, authorization = basic('root', ROOT_TOKEN)) => t.app.inject({ url, headers: { authorization } });
  const assertGitNotFound = (res: LightMyRequestResponse, what: string) => {
    assert.deepEqual([res.statusCode, res.headers['content-type'], res.body], [404, 'text/plain', `${MESSAGES.notFound}\n`], what);
  };

  it('git: a snippet id past 2^31 or a path past its column is the not-found answer, as an unknown repository', async () => {
    for (const id of ['99999999999999999999', '2147483648', '9223372036854775808', '00000000002147483648']) {
      assertGitNotFound(await git(`/snippets/${id}.git/info/refs?service=git-upload-pack`), id);
    }
    const ns = repo.split('/')[0];
    assertGitNotFound(await git(`/${ns}/${'p'.repeat(300)}.git/info/refs?service=git-upload-pack`), 'a 300-character project path');
    assertGitNotFound(await git(`/${'n'.repeat(300)}/x.git/info/refs?service=git-upload-pack`), 'a 300-character namespace');
    // Longer than the router reads: still git's own answer.
    assertGitNotFound(await git(`/${ns}/${'p'.repeat(1200)}.git/info/refs?service=git-upload-pack`), 'past maxParamLength');
    const escape = await git('/a/%FF.git/info/refs?service=git-upload-pack');
    assert.deepEqual([escape.statusCode, escape.headers['content-type'], escape.body], [400, 'text/plain', 'Bad Request\n']);
    // The real ones still answer.
    assert.equal((await git(`/snippets/${snippetId}.git/info/refs?service=git-upload-pack`)).statusCode, 200);
    assert.equal((await git(`/${repo}.git/info/refs?service=git-upload-pack`)).statusCode, 200);
  });

  it('git: HTTP Basic credentials with a NUL or bytes that are not UTF-8 are 400, as the Service\'s middleware answers', async () => {
    for (const password of ['a\u0000b', Buffer.from([0xff, 0xfe, 0x28])]) {
      for (const user of ['root', 'oauth2', 'gitlab-ci-token']) {
        const res = await git(`/${repo}.git/info/refs?service=git-upload-pack`, basic(user, password));
        assert.deepEqual([res.statusCode, res.json()], [400, BAD_REQUEST], user);
      }
    }
    const nulUser = await git(`/${repo}.git/info/refs?service=git-upload-pack`, basic('ro\u0000ot', ROOT_TOKEN));
    assert.equal(nulUser.statusCode, 400);
  });

  it('GraphQL: a lone surrogate is refused as NUL is, and NUL in a GET query is GraphQL\'s own syntax error', async () => {
    const gql = (query: string, variables: object) =>
      t.request({ method: 'POST', url: '/api/graphql', token: ROOT_TOKEN, payload: { query, variables } });
    const user = await gql('query($u: String!) { user(username: $u) { id } }', { u: 'a\ud800b' });
    assert.deepEqual(user.json(), {
      data: { user: null }, errors: [{ message: 'username must be valid UTF-8', locations: [{ line: 1, column: 22 }], path: ['user'] }],
    });
    const pipelines = 'query($p: ID!, $r: String) { project(fullPath: $p) { pipelines(ref: $r) { nodes { id } } } }';
    const ref = await gql(pipelines, { p: repo, r: 'main\u0000' });
    assert.equal(ref.json().errors[0].message, 'ref must not contain NUL bytes');
    const path = await gql('query($p: ID!) { project(fullPath: $p) { id } }', { p: `${repo.split('/')[0]}/${'p'.repeat(300)}` });
    assert.deepEqual(path.json(), { data: { project: null } });
    const get = await t.request({ url: '/api/graphql?query=%7B__typename%00%7D', token: ROOT_TOKEN });
    assert.equal(get.statusCode, 200);
    assert.match(get.json().errors[0].message, /^Syntax Error: Unexpected character: U\+0000/);
  });

  describe('SCIM', () => {
    const scim = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown, group = groupPath) => t.app.inject({
      method, url: `/api/scim/v2/groups/${group}${path}`,
      headers: { authorization: `Bearer ${scimToken}`, ...(payload === undefined ? {} : { 'content-type': SCIM_JSON }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    const assertScim = (res: LightMyRequestResponse, status: number, detail: string, scimType?: string) => {
      assert.equal(res.headers['content-type'], SCIM_JSON, res.body);
      assert.deepEqual(res.json(), { schemas: [ERROR_URN], detail, status: String(status), ...(scimType ? { scimType } : {}) });
      assert.equal(res.statusCode, status);
    };

    it('answers paths the router cannot read in SCIM\'s error shape', async () => {
      assertScim(await scim('GET', '/Users/%FF'), 400, 'Request path is not valid UTF-8', 'invalidSyntax');
      assertScim(await scim('GET', '/Users', undefined, '%ED%A0%80'), 400, 'Request path is not valid UTF-8', 'invalidSyntax');
      assertScim(await scim('GET', `/Users/${'x'.repeat(1200)}`), 404, 'Resource not found');
      // A numeric group path past 2^31 is a group nobody has: the same 401 as any unknown group.
      assertScim(await scim('GET', '/Users', undefined, '99999999999999999999'), 401, '401 Unauthorized');
    });

    it('refuses lone surrogates in bodies as it refuses NUL', async () => {
      const valid = {
        externalId: 'bounds-1', userName: 'bounds.one', name: { formatted: 'B One' },
        emails: [{ type: 'work', value: 'bounds.one@example.org' }],
      };
      assertScim(await scim('POST', '/Users', { ...valid, userName: 'x\udfff' }), 400, 'Request body is not valid UTF-8', 'invalidValue');
      const nul = await scim('POST', '/Users', { ...valid, externalId: 'a\u0000b' });
      assertScim(nul, 400, 'Request body contains a NUL byte', 'invalidValue');
      assert.equal((await scim('POST', '/Users', valid)).statusCode, 201);
      const patch = await scim('PATCH', '/Users/bounds-1', { Operations: [{ op: 'replace', path: 'name.formatted', value: '\ud800' }] });
      assertScim(patch, 400, 'Request body is not valid UTF-8', 'invalidValue');
    });
  });

  it('OAuth: NUL and lone surrogates in JSON bodies are 400, and client credentials no uid can be name no client', async () => {
    const json = (url: string, body: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const creds = { client_id: client.clientId, client_secret: client.secret };
    for (const username of ['ro\u0000ot', 'ro\ud800ot']) {
      const res = await json('/oauth/token', { grant_type: 'password', username, password: 'x', ...creds });
      assert.deepEqual([res.statusCode, res.json()], [400, BAD_REQUEST]);
    }
    const nulClient = await json('/oauth/token', { grant_type: 'password', username: 'root', password: 'x', client_id: 'a\u0000' });
    assert.deepEqual([nulClient.statusCode, nulClient.json()], [400, BAD_REQUEST]);
    // RFC 6749 §2.3.1: each half of the Basic credentials is form-encoded, so %00 is a NUL once decoded.
    for (const uid of ['%00', 'a%00b', 'c'.repeat(3000)]) {
      const res = await t.app.inject({
        method: 'POST', url: '/oauth/token', payload: 'grant_type=password&username=root&password=x',
        headers: { authorization: basic(uid, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.deepEqual([res.statusCode, res.json().error], [401, 'invalid_client'], uid.slice(0, 10));
    }
    // A token of the (confidential) client may be revoked by that client only: a NUL uid is not it.
    const issued = await t.app.inject({
      method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'password', username: 'root', password: 'root-password-1234', ...creds }).toString(),
    });
    assert.equal(issued.statusCode, 200, issued.body);
    const revoke = await t.app.inject({
      method: 'POST', url: '/oauth/revoke', payload: `token=${issued.json().access_token}`,
      headers: { authorization: basic('%00', client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.deepEqual([revoke.statusCode, revoke.json().error], [403, 'unauthorized_client']);
    const authorize = await json('/oauth/authorize', {
      client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api', state: 's', nonce: 'n\u0000',
      authenticity_token: csrf,
    }, { cookie });
    assert.deepEqual([authorize.statusCode, authorize.json()], [400, BAD_REQUEST]);
  });

  it('OAuth: a nonce longer than any stored one goes back to the client as invalid_request', async () => {
    const query = new URLSearchParams({
      client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api', state: 's', nonce: 'n'.repeat(256),
    });
    const res = await t.app.inject({ url: `/oauth/authorize?${query}`, headers: { cookie } });
    assert.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    const answer = ['error', 'error_description', 'state'].map((k) => location.searchParams.get(k));
    assert.deepEqual(answer, ['invalid_request', 'The nonce is invalid.', 's']);
    assert.equal(await t.db.selectFrom('oauth_access_grants').select('id').where('nonce', 'like', 'nnn%').executeTakeFirst(), undefined);
  });

  it('pages: JSON forms with NUL are 400, a redirect URI past 1 MiB is the form\'s own error, and sign-in takes no NUL', async () => {
    const before = await t.db.selectFrom('oauth_applications').select('id').execute();
    const form = (application: object) => t.app.inject({
      method: 'POST', url: '/profile/applications', headers: { cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({
        authenticity_token: csrf, doorkeeper_application: { redirect_uri: 'https://a.example/cb', scopes: ['api'], ...application },
      }),
    });
    for (const name of ['a\u0000b', 'x\ud800']) {
      const res = await form({ name });
      assert.deepEqual([res.statusCode, res.json()], [400, BAD_REQUEST]);
    }
    const long = await form({ name: 'long', redirect_uri: `https://a.example/${'x'.repeat(1_048_576)}` });
    assert.equal(long.statusCode, 422);
    assert.match(long.body, /is too long \(maximum is 1048576 characters\)/);
    assert.deepEqual(await t.db.selectFrom('oauth_applications').select('id').execute(), before);

    const raw = 'b'.repeat(64);
    const signIn = await t.app.inject({
      method: 'POST', url: '/users/sign_in', headers: { cookie: `_service_csrf=${raw}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        authenticity_token: csrfTokenFor(t.app.kiln.secretKeyBase, `pre-session:${raw}`), user: { login: 'ro\u0000ot', password: 'x' },
      }),
    });
    assert.deepEqual([signIn.statusCode, signIn.json()], [400, BAD_REQUEST]);
    for (const id of ['99999999999999999999', '2147483648']) {
      assert.equal((await t.app.inject({ url: `/profile/applications/${id}`, headers: { cookie } })).statusCode, 404, id);
    }
  });

  it('the API: a path the router cannot read answers in the API\'s shape, not the framework\'s', async () => {
    const escape = await t.request({ url: '/api/v4/users/%FF', token: ROOT_TOKEN });
    assert.deepEqual([escape.statusCode, escape.json()], [400, BAD_REQUEST]);
    const long = await t.request({ url: `/api/v4/projects/${'p'.repeat(1200)}`, token: ROOT_TOKEN });
    assert.deepEqual([long.statusCode, long.json()], [404, { error: '404 Not Found' }]);
  });
});
