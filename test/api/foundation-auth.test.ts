/**
 * Authentication, every credential source of the spec's table (reference §5.1) × valid, unknown,
 * expired, revoked and wrong-scope credentials, with the Service's exact bodies and headers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/db/types.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createOauthToken, createSession, createToken, createUser } from '../helpers/factories.ts';

/** A write route needing authentication (there is no real one in the foundation). */
const probe: FastifyPluginAsync = async (app) => {
  await app.register(async (api) => {
    api.post('/__probe', { config: { auth: 'required' } }, async (request, reply) => {
      reply.code(201);
      return { id: request.caller!.user.id, kind: request.caller!.credential.kind };
    });
  }, { prefix: '/api/v4' });
};

const UNAUTHORIZED = { message: '401 Unauthorized' };
const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const HIGHER = 'The request requires higher privileges than provided by the access token.';
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

type TokenKind = 'pat' | 'oauth' | 'impersonation';

/** Each row of the spec's Authentication table: which token it carries and how it is sent. */
const SOURCES: { name: string; kind: TokenKind; method: 'GET' | 'POST'; send: (token: string) => InjectOptions }[] = [
  { name: 'PRIVATE-TOKEN header', kind: 'pat', method: 'GET', send: (v) => ({ headers: { 'private-token': v } }) },
  { name: 'private_token query parameter', kind: 'pat', method: 'GET', send: (v) => ({ query: { private_token: v } }) },
  { name: 'private_token in a JSON body', kind: 'pat', method: 'POST', send: (v) => ({ payload: { private_token: v } }) },
  {
    name: 'private_token in a form body', kind: 'pat', method: 'POST',
    send: (v) => ({ payload: `private_token=${encodeURIComponent(v)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
  },
  { name: 'Authorization: Bearer with a personal access token', kind: 'pat', method: 'GET', send: (v) => ({ headers: { authorization: `Bearer ${v}` } }) },
  { name: 'Authorization: Bearer with an OAuth token', kind: 'oauth', method: 'GET', send: (v) => ({ headers: { authorization: `Bearer ${v}` } }) },
  { name: 'access_token query parameter with an OAuth token', kind: 'oauth', method: 'GET', send: (v) => ({ query: { access_token: v } }) },
  { name: 'impersonation token in PRIVATE-TOKEN', kind: 'impersonation', method: 'GET', send: (v) => ({ headers: { 'private-token': v } }) },
  { name: 'impersonation token as Bearer', kind: 'impersonation', method: 'GET', send: (v) => ({ headers: { authorization: `Bearer ${v}` } }) },
];

describe('authentication by every credential source', () => {
  let t: TestApp;
  let alice: UserRow;

  before(async () => {
    t = await startTestApp({}, { plugins: [probe] });
    alice = await createUser(t.db);
  });
  after(async () => { await t.close(); });

  async function token(kind: TokenKind, o: { scopes?: string[]; expired?: boolean; revoked?: boolean } = {}): Promise<string> {
    if (kind === 'oauth') {
      return createOauthToken(t.db, alice, {
        scopes: o.scopes ?? ['api'], revoked: o.revoked,
        ...(o.expired ? { expiresIn: 7200, createdAt: new Date(Date.now() - 3 * 3_600_000).toISOString() } : {}),
      });
    }
    return createToken(t.db, alice, {
      scopes: o.scopes ?? ['api'], revoked: o.revoked, impersonation: kind === 'impersonation', expiresAt: o.expired ? yesterday() : null,
    });
  }

  function call(source: (typeof SOURCES)[number], value: string): Promise<LightMyRequestResponse> {
    const url = source.method === 'GET' ? '/api/v4/user' : '/api/v4/__probe';
    return t.request({ method: source.method, url, ...source.send(value) });
  }

  for (const source of SOURCES) {
    describe(source.name, () => {
      it('authenticates a valid token', async () => {
        const res = await call(source, await token(source.kind));
        assert.equal(res.statusCode, source.method === 'GET' ? 200 : 201);
        assert.equal(res.json().id, alice.id);
        if (source.method === 'GET') assert.equal(res.json().username, alice.username);
      });

      it('answers 401 Unauthorized to an unknown token', async () => {
        const res = await call(source, source.kind === 'oauth' ? 'f'.repeat(64) : 'not-a-real-token-0000');
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), UNAUTHORIZED);
        assert.equal(res.headers['content-type'], 'application/json');
      });

      it('answers 401 invalid_token to an expired token, with WWW-Authenticate', async () => {
        const res = await call(source, await token(source.kind, { expired: true }));
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), { error: 'invalid_token', error_description: EXPIRED });
        assert.equal(res.headers['www-authenticate'], `Bearer realm="", error="invalid_token", error_description="${EXPIRED}"`);
      });

      it('answers 401 invalid_token to a revoked token', async () => {
        const res = await call(source, await token(source.kind, { revoked: true }));
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), { error: 'invalid_token', error_description: REVOKED });
        assert.match(String(res.headers['www-authenticate']), /^Bearer realm="", error="invalid_token"/);
      });

      it('answers 403 insufficient_scope to a token without a scope of the route', async () => {
        const res = await call(source, await token(source.kind, { scopes: ['read_repository'] }));
        assert.equal(res.statusCode, 403);
        const scope = source.method === 'GET' ? 'api read_api read_user' : 'api';
        assert.deepEqual(res.json(), { error: 'insufficient_scope', error_description: HIGHER, scope });
        assert.equal(res.headers['www-authenticate'], undefined);
      });
    });
  }

  it('does not take an OAuth token as private_token, nor a PAT as one of its own kind elsewhere', async () => {
    const oauth = await token('oauth');
    assert.deepEqual((await t.request({ url: '/api/v4/user', headers: { 'private-token': oauth } })).json(), UNAUTHORIZED);
    const pat = await token('pat');
    const res = await t.request({ url: '/api/v4/user', query: { access_token: pat } });
    assert.equal(res.statusCode, 200, 'access_token is a Bearer source, which accepts personal access tokens too');
  });

  it('answers 401 without any credential, and to a malformed Authorization header', async () => {
    const none = await t.request({ url: '/api/v4/user' });
    assert.equal(none.statusCode, 401);
    assert.deepEqual(none.json(), UNAUTHORIZED);
    const basic = await t.request({ url: '/api/v4/user', headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(basic.statusCode, 401);
    assert.deepEqual(basic.json(), UNAUTHORIZED);
  });

  it('lets read_api read but not write, and read_user read GET /user', async () => {
    const readApi = await token('pat', { scopes: ['read_api'] });
    assert.equal((await t.request({ url: '/api/v4/user', token: readApi })).statusCode, 200);
    const write = await t.request({ method: 'POST', url: '/api/v4/__probe', token: readApi });
    assert.equal(write.statusCode, 403);
    assert.deepEqual(write.json(), { error: 'insufficient_scope', error_description: HIGHER, scope: 'api' });

    const readUser = await token('oauth', { scopes: ['read_user'] });
    const me = await t.request({ url: '/api/v4/user', headers: { authorization: `Bearer ${readUser}` } });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().id, alice.id);
    const writeUser = await t.request({ method: 'POST', url: '/api/v4/__probe', headers: { authorization: `Bearer ${readUser}` } });
    assert.equal(writeUser.statusCode, 403);
    assert.equal(writeUser.json().scope, 'api');
  });

  describe('the _service_session cookie', () => {
    it('authenticates GET and HEAD', async () => {
      const cookie = await createSession(t.db, alice);
      const res = await t.request({ url: '/api/v4/user', cookies: { _service_session: cookie } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().id, alice.id);
      const head = await t.request({ method: 'HEAD', url: '/api/v4/user', cookies: { _service_session: cookie } });
      assert.equal(head.statusCode, 200);
    });

    it('is ignored on a write without a CSRF token, or with a wrong one', async () => {
      const cookie = await createSession(t.db, alice);
      for (const headers of [{}, { 'x-csrf-token': 'forged' }, { 'x-csrf-token': csrfTokenFor(t.app.kiln.secretKeyBase, 'another-session') }]) {
        const res = await t.request({ method: 'POST', url: '/api/v4/__probe', cookies: { _service_session: cookie }, headers });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json(), UNAUTHORIZED);
      }
    });

    it('authenticates a write that carries the CSRF token of its session', async () => {
      const cookie = await createSession(t.db, alice);
      const res = await t.request({
        method: 'POST', url: '/api/v4/__probe', cookies: { _service_session: cookie },
        headers: { 'x-csrf-token': csrfTokenFor(t.app.kiln.secretKeyBase, cookie) },
      });
      assert.equal(res.statusCode, 201);
      assert.deepEqual(res.json(), { id: alice.id, kind: 'session' });
    });

    it('answers 401 to an unknown or expired session', async () => {
      const unknown = await t.request({ url: '/api/v4/user', cookies: { _service_session: 'nope' } });
      assert.equal(unknown.statusCode, 401);
      assert.deepEqual(unknown.json(), UNAUTHORIZED);
      const cookie = await createSession(t.db, alice);
      await t.db.updateTable('sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
      const expired = await t.request({ url: '/api/v4/user', cookies: { _service_session: cookie } });
      assert.equal(expired.statusCode, 401);
      assert.deepEqual(expired.json(), UNAUTHORIZED);
    });

    it('gives way to a token sent alongside it', async () => {
      const bob = await createUser(t.db);
      const cookie = await createSession(t.db, bob);
      const res = await t.request({ url: '/api/v4/user', cookies: { _service_session: cookie }, token: await token('pat') });
      assert.equal(res.json().id, alice.id);
    });
  });

  it('lets a PRIVATE-TOKEN win over a Bearer token, as the Service orders its sources', async () => {
    const bob = await createUser(t.db);
    const res = await t.request({
      url: '/api/v4/user', headers: { 'private-token': await token('pat'), authorization: `Bearer ${await createToken(t.db, bob)}` },
    });
    assert.equal(res.json().id, alice.id);
  });
});
