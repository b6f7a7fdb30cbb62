/**
 * Sudo (spec, Authentication: Sudo; reference §5.3): by the `Sudo` header or the `sudo` query
 * parameter, by id or case-insensitive username, and its failures with their exact bodies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createOauthToken, createSession, createToken, createUser } from '../helpers/factories.ts';

const HIGHER = 'The request requires higher privileges than provided by the access token.';

/** The two ways to ask for sudo. */
const WAYS: { name: string; with: (value: string) => InjectOptions }[] = [
  { name: 'Sudo header', with: (v) => ({ headers: { sudo: v } }) },
  { name: 'sudo query parameter', with: (v) => ({ query: { sudo: v } }) },
];

function merge(a: InjectOptions, b: InjectOptions): InjectOptions {
  return { ...a, ...b, headers: { ...a.headers, ...b.headers }, query: { ...(a.query as object), ...(b.query as object) } };
}

describe('sudo', () => {
  let t: TestApp;
  let target: UserRow;
  let plain: UserRow;

  before(async () => {
    t = await startTestApp();
    target = await createUser(t.db, { username: 'Target.User' });
    plain = await createUser(t.db);
  });
  after(async () => { await t.close(); });

  const me = (opts: InjectOptions) => t.request(merge({ url: '/api/v4/user' }, opts));

  for (const way of WAYS) {
    describe(`by the ${way.name}`, () => {
      it('acts as the target named by id', async () => {
        const res = await me(merge({ headers: { 'private-token': ROOT_TOKEN } }, way.with(String(target.id))));
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().id, target.id);
        assert.equal(res.json().username, 'Target.User');
        assert.equal(res.json().is_admin, undefined, 'the target sees its own, non-admin view');
      });

      it('acts as the target named by username, in any case', async () => {
        for (const name of ['Target.User', 'target.user', 'TARGET.USER']) {
          const res = await me(merge({ headers: { 'private-token': ROOT_TOKEN } }, way.with(name)));
          assert.equal(res.statusCode, 200, name);
          assert.equal(res.json().id, target.id, name);
        }
      });

      it('works with an administrator\'s OAuth token that has the sudo scope', async () => {
        const admin = await createAdmin(t.db);
        const oauth = await createOauthToken(t.db, admin, { scopes: ['api', 'sudo'] });
        const res = await me(merge({ headers: { authorization: `Bearer ${oauth}` } }, way.with(String(target.id))));
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().id, target.id);
      });

      it('refuses a non-administrator with 403 Must be admin', async () => {
        const token = await createToken(t.db, plain, { scopes: ['api', 'sudo'] });
        const res = await me(merge({ headers: { 'private-token': token } }, way.with(String(target.id))));
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), { message: '403 Forbidden - Must be admin to use sudo' });
      });

      it('refuses an administrator token without the sudo scope with 403 insufficient_scope', async () => {
        const admin = await createAdmin(t.db);
        const token = await createToken(t.db, admin, { scopes: ['api'] });
        const res = await me(merge({ headers: { 'private-token': token } }, way.with(String(target.id))));
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), { error: 'insufficient_scope', error_description: HIGHER, scope: 'sudo' });
      });

      it('answers 404 for an unknown target, quoting the value', async () => {
        for (const value of ['999999', 'no-such-user']) {
          const res = await me(merge({ headers: { 'private-token': ROOT_TOKEN } }, way.with(value)));
          assert.equal(res.statusCode, 404);
          assert.deepEqual(res.json(), { message: `404 User with ID or username '${value}' Not Found` });
        }
      });

      it('refuses a session with 403 Must be authenticated using a token', async () => {
        const admin = await createAdmin(t.db);
        const cookie = await createSession(t.db, admin);
        const res = await me(merge({ cookies: { _service_session: cookie } }, way.with(String(target.id))));
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), { message: '403 Forbidden - Must be authenticated using an OAuth or Personal Access Token to use sudo' });
      });

      it('answers 401 without credentials, even on a route open to anonymous callers', async () => {
        for (const url of ['/api/v4/user', `/api/v4/users/${target.id}`]) {
          const res = await t.request(merge({ url }, way.with(String(target.id))));
          assert.equal(res.statusCode, 401, url);
          assert.deepEqual(res.json(), { message: '401 Unauthorized' });
        }
      });
    });
  }

  it('skips the route scopes when sudo is used: a sudo-only token is enough', async () => {
    const admin = await createAdmin(t.db);
    const token = await createToken(t.db, admin, { scopes: ['sudo'] });
    const res = await me({ headers: { 'private-token': token, sudo: target.username } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, target.id);
    const without = await me({ headers: { 'private-token': token } });
    assert.equal(without.statusCode, 403);
    assert.equal(without.json().scope, 'api read_api read_user');
  });

  it('prefers the Sudo header over the sudo query parameter', async () => {
    const res = await me({ headers: { 'private-token': ROOT_TOKEN, sudo: String(target.id) }, query: { sudo: String(plain.id) } });
    assert.equal(res.json().id, target.id);
  });

  it('shows a single user through the target\'s eyes', async () => {
    const res = await t.request({ url: `/api/v4/users/${plain.id}`, token: ROOT_TOKEN, headers: { sudo: target.username } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, plain.id);
    assert.equal(res.json().is_admin, undefined, 'a non-admin target does not get the admin view');
    const asRoot = await t.request({ url: `/api/v4/users/${plain.id}`, token: ROOT_TOKEN });
    assert.equal(asRoot.json().is_admin, false);
  });

  it('refuses a blocked administrator before looking at sudo', async () => {
    const admin = await createAdmin(t.db, { state: 'blocked' });
    const token = await createToken(t.db, admin, { scopes: ['api', 'sudo'] });
    const res = await me({ headers: { 'private-token': token, sudo: String(target.id) } });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  });
});
