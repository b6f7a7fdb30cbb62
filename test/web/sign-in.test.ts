import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { hashPassword } from '../../src/domain/users/password.ts';
import { postForm } from '../helpers/oauth.ts';
import type { UserRow } from '../../src/db/types.ts';

const PASSWORD = 'a long enough password';

function cookieOf(res: LightMyRequestResponse, name: string) {
  return res.cookies.find((c) => c.name === name);
}

/** GET the form: its pre-session cookie and CSRF token. */
async function openForm(t: TestApp, query = ''): Promise<{ cookie: string; token: string; body: string }> {
  const res = await t.request({ url: `/users/sign_in${query}` });
  assert.equal(res.statusCode, 200);
  const pre = cookieOf(res, '_service_csrf')!;
  const token = /name="authenticity_token" value="([^"]+)"/.exec(res.body)![1];
  return { cookie: `_service_csrf=${pre.value}`, token, body: res.body };
}

describe('/users/sign_in and /users/sign_out', () => {
  let t: TestApp;
  let user: UserRow;
  let hash: string;
  const signIn = async (login: string, password: string, extra: Record<string, string> = {}, query = '') => {
    const f = await openForm(t, query);
    // What the browser submits: the form's hidden return_to, if the page rendered one.
    const hidden = /name="return_to" value="([^"]+)"/.exec(f.body)?.[1].replace(/&amp;/g, '&');
    return postForm(t, '/users/sign_in', {
      'user[login]': login, 'user[password]': password, authenticity_token: f.token, ...(hidden ? { return_to: hidden } : {}), ...extra,
    }, { cookie: f.cookie });
  };

  before(async () => {
    t = await startTestApp();
    hash = await hashPassword(PASSWORD);
    user = await createUser(t.db, { encrypted_password: hash });
  });
  after(async () => { await t.close(); });

  it('serves the form with user[login], user[password] and a CSRF token, framing denied', async () => {
    const res = await t.request({ url: '/users/sign_in' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(res.body, /name="user\[login\]"/);
    assert.match(res.body, /name="user\[password\]"/);
    const pre = cookieOf(res, '_service_csrf')!;
    assert.equal(pre.httpOnly, true);
    assert.equal(pre.sameSite, 'Lax');
  });

  it('signs in by username or email and sets the _service_session cookie (HttpOnly, SameSite=Lax)', async () => {
    for (const login of [user.username, user.email.toUpperCase()]) {
      const res = await signIn(login, PASSWORD);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/profile/applications');
      const session = cookieOf(res, '_service_session')!;
      assert.match(session.value, /^[0-9a-f]{64}$/);
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
      assert.equal(session.secure, undefined);
      assert.equal(session.path, '/');
      const page = await t.request({ url: '/profile/applications', headers: { cookie: `_service_session=${session.value}` } });
      assert.equal(page.statusCode, 200);
    }
    const row = await t.db.selectFrom('users').select(['sign_in_count', 'current_sign_in_at']).where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.sign_in_count, 2);
    assert.notEqual(row.current_sign_in_at, null);
  });

  it('refuses a sign-in without the pre-session CSRF token or cookie', async () => {
    const f = await openForm(t);
    const noToken = await postForm(t, '/users/sign_in', { 'user[login]': user.username, 'user[password]': PASSWORD }, { cookie: f.cookie });
    assert.equal(noToken.statusCode, 422);
    const noCookie = await postForm(t, '/users/sign_in', { 'user[login]': user.username, 'user[password]': PASSWORD, authenticity_token: f.token });
    assert.equal(noCookie.statusCode, 422);
    const other = await openForm(t);
    const mixed = await postForm(t, '/users/sign_in', { 'user[login]': user.username, 'user[password]': PASSWORD, authenticity_token: other.token }, { cookie: f.cookie });
    assert.equal(mixed.statusCode, 422);
    assert.equal(cookieOf(mixed, '_service_session'), undefined);
  });

  it('says "Invalid login or password." for a wrong password or unknown login', async () => {
    for (const [login, password] of [[user.username, 'wrong'], ['nobody', PASSWORD], ['', '']]) {
      const res = await signIn(login, password);
      assert.equal(res.statusCode, 401);
      assert.match(res.body, /Invalid login or password\./);
      assert.equal(cookieOf(res, '_service_session'), undefined);
    }
  });

  it('returns only to paths on this server', async () => {
    const own = await signIn(user.username, PASSWORD, {}, `?return_to=${encodeURIComponent('/oauth/authorize?client_id=a&state=b')}`);
    assert.equal(own.headers.location, '/oauth/authorize?client_id=a&state=b');
    for (const evil of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/\tevil', 'http://kiln.test.evil.example/',
      // Dot segments normalise to `//evil.example`: checked after normalising (issue 13).
      '/..//evil.example', '/.//evil.example', '/%2e%2e//evil.example', '/a/../..//evil.example', '/./\\evil.example']) {
      const res = await signIn(user.username, PASSWORD, { return_to: evil });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/profile/applications', evil);
    }
    // The signed-in GET redirects the same way, and the sign-in page never echoes the address.
    const page = await t.request({ method: 'GET', url: `/users/sign_in?return_to=${encodeURIComponent('/..//evil.example')}` });
    assert.doesNotMatch(page.body, /evil\.example/);
    const dotted = await signIn(user.username, PASSWORD, { return_to: '/a/./b/../c?x=1' });
    assert.equal(dotted.headers.location, '/a/c?x=1');
  });

  it('locks the account after 10 failures: "Your account is locked." even with the right password', async () => {
    const victim = await createUser(t.db, { encrypted_password: hash });
    for (let i = 0; i < 9; i++) assert.match((await signIn(victim.username, 'nope')).body, /Invalid login or password\./);
    assert.match((await signIn(victim.username, 'nope')).body, /Your account is locked\./);
    const right = await signIn(victim.username, PASSWORD);
    assert.equal(right.statusCode, 401);
    assert.match(right.body, /Your account is locked\./);
    await t.db.updateTable('users').set({ locked_at: new Date(Date.now() - 601_000).toISOString() }).where('id', '=', victim.id).execute();
    assert.equal((await signIn(victim.username, PASSWORD)).statusCode, 303);
  });

  it('refuses blocked users and users whose second factor cannot be checked', async () => {
    const blocked = await createUser(t.db, { encrypted_password: hash, state: 'blocked' });
    assert.match((await signIn(blocked.username, PASSWORD)).body, /Your account has been blocked\./);
    const twoFactor = await createUser(t.db, { encrypted_password: hash, otp_required_for_login: 1 });
    const res = await signIn(twoFactor.username, PASSWORD);
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Two-factor authentication is enabled/);
  });

  it('signs out with the session CSRF token, ending the session', async () => {
    const res = await signIn(user.username, PASSWORD);
    const session = cookieOf(res, '_service_session')!.value;
    const page = await t.request({ url: '/profile/applications', headers: { cookie: `_service_session=${session}` } });
    const csrf = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
    const forged = await postForm(t, '/users/sign_out', {}, { cookie: `_service_session=${session}` });
    assert.equal(forged.statusCode, 422);
    const out = await postForm(t, '/users/sign_out', { authenticity_token: csrf }, { cookie: `_service_session=${session}` });
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, '/users/sign_in');
    assert.equal(cookieOf(out, '_service_session')!.value, '');
    const after = await t.request({ url: '/profile/applications', headers: { cookie: `_service_session=${session}` } });
    assert.equal(after.statusCode, 302);
    assert.match(after.headers.location as string, /^\/users\/sign_in\?return_to=/);
  });
});

describe('the session cookie behind https', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ KILN_EXTERNAL_URL: 'https://kiln.example' }); });
  after(async () => { await t.close(); });

  it('is Secure', async () => {
    const hash = await hashPassword(PASSWORD);
    const user = await createUser(t.db, { encrypted_password: hash });
    const f = await openForm(t);
    const res = await postForm(t, '/users/sign_in', { 'user[login]': user.username, 'user[password]': PASSWORD, authenticity_token: f.token }, { cookie: f.cookie });
    assert.equal(cookieOf(res, '_service_session')!.secure, true);
  });
});
