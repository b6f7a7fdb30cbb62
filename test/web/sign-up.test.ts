/**
 * /users/sign_up and POST /users (issue 33 item 1): the form while signup_enabled is on and the
 * 404 page while it is off, the pre-session CSRF token, POST /users's rules for the account, the
 * domain allowlist and denylist and the email restrictions, approval after sign-up, the email
 * confirmation setting, and the sign-in page's link.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { postForm } from '../helpers/oauth.ts';
import { domainMatches, signUpEmailError } from '../../src/domain/users/sign-up.ts';

const PASSWORD = 'a long enough password';

describe('/users/sign_up', () => {
  let t: TestApp;
  let n = 0;

  const settings = async (payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload });
    assert.equal(res.statusCode, 200, res.body);
  };
  const preCookie = (res: LightMyRequestResponse) => `_service_csrf=${res.cookies.find((c) => c.name === '_service_csrf')!.value}`;

  async function signUp(fields: Partial<Record<'name' | 'username' | 'email' | 'password', string>> = {}, o: { token?: string } = {}) {
    const form = await t.request({ url: '/users/sign_up' });
    assert.equal(form.statusCode, 200, form.body);
    const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1]!;
    n += 1;
    const values = { name: `New <b>person</b> ${n}`, username: `newbie${n}`, email: `newbie${n}@example.com`, password: PASSWORD, ...fields };
    return postForm(t, '/users', {
      authenticity_token: o.token ?? token,
      ...Object.fromEntries(Object.entries(values).map(([k, v]) => [`new_user[${k}]`, v])),
    }, { cookie: preCookie(form) });
  }
  const userByUsername = (username: string) => t.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();

  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('serves the form with the Service\'s fields, linked from the sign-in page', async () => {
    const res = await t.request({ url: '/users/sign_up' });
    assert.equal(res.statusCode, 200);
    for (const f of ['name', 'username', 'email', 'password']) assert.match(res.body, new RegExp(`name="new_user\\[${f}\\]"`));
    assert.match(res.body, /name="authenticity_token"/);
    assert.match(res.body, /<form method="post" action="\/users"/);
    assert.match((await t.request({ url: '/users/sign_in' })).body, /href="\/users\/sign_up" id="register-link"/);
  });

  it('creates the account, signs it in and confirms it while confirmation emails are off', async () => {
    const res = await signUp({ username: 'fresh-user', email: 'fresh@example.com' });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/');
    const session = res.cookies.find((c) => c.name === '_service_session');
    assert.ok(session, 'a session starts');
    const user = await userByUsername('fresh-user');
    assert.equal(user?.state, 'active');
    assert.ok(user?.confirmed_at, 'confirmed at once');
    assert.equal(user?.created_by_id, null);
    assert.match(user!.name, /^New <b>person<\/b>/);
    const home = await t.request({ url: '/', headers: { cookie: `_service_session=${session.value}` } });
    assert.match(home.body, /id="user-menu">fresh-user</);
    // A signed-in visitor is sent away from the form.
    const again = await t.request({ url: '/users/sign_up', headers: { cookie: `_service_session=${session.value}` } });
    assert.equal(again.statusCode, 302);
  });

  it('answers POST /users\'s refusals with 400, the messages, and what was typed but the password', async () => {
    const taken = await createUser(t.db);
    const cases: [Record<string, string>, RegExp][] = [
      [{ email: taken.email.toUpperCase() }, /Email has already been taken/],
      [{ username: taken.username }, /Username has already been taken/],
      [{ password: 'short' }, /Password is too short \(minimum is 8 characters\)/],
      [{ email: 'not-an-email' }, /Email is invalid/],
      [{ name: '' }, /Name can&#39;t be blank/],
      [{ username: 'bad username!' }, /<li>Username [^<]+<\/li>/],
      [{ name: 'x'.repeat(300) }, /Name is too long/],
      [{ password: 'p'.repeat(200) }, /Password is too long/],
    ];
    for (const [fields, message] of cases) {
      const res = await signUp({ ...fields, name: fields.name ?? 'Typed <i>name</i>' });
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.match(res.body, message);
      assert.ok(!res.body.includes(PASSWORD), 'the password is not sent back');
      assert.ok(!res.body.includes('<i>name</i>'));
    }
    const kept = await signUp({ email: 'not-an-email', name: 'Typed <i>name</i>' });
    assert.ok(kept.body.includes('value="Typed &lt;i&gt;name&lt;/i&gt;"'));
  });

  it('refuses a form without the pre-session CSRF token', async () => {
    const res = await signUp({ username: 'forged-user' }, { token: 'forged' });
    assert.equal(res.statusCode, 422);
    assert.equal(await userByUsername('forged-user'), undefined);
  });

  it('applies the domain allowlist, the denylist and the email restrictions', async () => {
    await settings({ domain_denylist_enabled: true, domain_denylist: ['*.spam.test', 'bad.test'] });
    assert.match((await signUp({ email: 'a@mail.spam.test' })).body, /Email is not from an allowed domain\./);
    assert.match((await signUp({ email: 'a@BAD.test' })).body, /Email is not from an allowed domain\./);
    assert.equal((await signUp({ email: 'ok-deny@good.test' })).statusCode, 303);
    await settings({ domain_allowlist: ['good.test', 'bad.test'] });
    assert.match((await signUp({ email: 'a@other.test' })).body, /Email domain is not authorized for sign-up/);
    // The allowlist wins over the denylist.
    assert.equal((await signUp({ email: 'ok-both@bad.test' })).statusCode, 303);
    await settings({ domain_allowlist: [], domain_denylist_enabled: false, email_restrictions_enabled: true, email_restrictions: '\\+|(a+)+$' });
    const restricted = await signUp({ email: 'me+tag@good.test' });
    assert.equal(restricted.statusCode, 400);
    assert.match(restricted.body, /Email is not allowed\. Try again with a different email address, or contact your Service admin\./);
    // RE2: a pattern with nested repetition fails to match in linear time (a backtracking engine would not return).
    const started = Date.now();
    assert.equal((await signUp({ email: `${'a'.repeat(200)}!@good.test` })).statusCode, 303);
    assert.ok(Date.now() - started < 5000);
    await settings({ email_restrictions_enabled: false });
    assert.equal(domainMatches('*.Example.COM', 'x.example.com'), true);
    assert.equal(domainMatches('example.com', 'notexample.com'), false);
    assert.equal(signUpEmailError({
      domain_denylist_enabled: false, domain_denylist: [], domain_allowlist: [], email_restrictions_enabled: true, email_restrictions: '(',
    }, 'x@y.z'), null, 'a pattern that does not compile restricts nothing');
  });

  it('leaves an account awaiting approval signed out, and unconfirmed while confirmation emails are on', async () => {
    await settings({ require_admin_approval_after_user_signup: true, send_user_confirmation_email: true });
    try {
      const res = await signUp({ username: 'waiting-user' });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /awaiting approval from your Service administrator/);
      assert.equal(res.cookies.find((c) => c.name === '_service_session'), undefined);
      const user = await userByUsername('waiting-user');
      assert.equal(user?.state, 'blocked_pending_approval');
      assert.equal(user?.confirmed_at, null);
    } finally {
      await settings({ require_admin_approval_after_user_signup: false, send_user_confirmation_email: false });
    }
  });

  it('answers the 404 page while sign-up is off, and no longer links it', async () => {
    await settings({ signup_enabled: false });
    try {
      const form = await t.request({ url: '/users/sign_up' });
      assert.equal(form.statusCode, 404);
      assert.match(form.body, /Page Not Found/);
      const post = await postForm(t, '/users', { 'new_user[username]': 'off-user', 'new_user[email]': 'off@example.com', 'new_user[password]': PASSWORD, 'new_user[name]': 'Off' });
      assert.equal(post.statusCode, 404);
      assert.equal(await userByUsername('off-user'), undefined);
      assert.doesNotMatch((await t.request({ url: '/users/sign_in' })).body, /sign_up/);
    } finally {
      await settings({ signup_enabled: true });
    }
  });
});
