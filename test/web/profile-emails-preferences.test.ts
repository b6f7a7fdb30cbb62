/**
 * /-/profile, /-/profile/emails and /-/profile/preferences (issue 33 item 6), each checked against
 * the API it mirrors: an email the page adds GET /user/emails lists (unconfirmed), the API's
 * refusals are the page's 400s, another user's email is not found, preferences saved on the page
 * are GET /user/preferences's, and no write happens without the session's CSRF token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { postForm, signedInBrowser, type Browser } from '../helpers/oauth.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('profile emails and preferences pages', () => {
  let t: TestApp;
  let user: UserRow;
  let other: UserRow;
  let me: Browser;
  let them: Browser;
  let token: string;
  let otherToken: string;
  const get = (url: string, b: Browser | null = me) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const post = (url: string, fields: Record<string, string>, b: Browser = me) => postForm(t, url, { authenticity_token: b.csrf, ...fields }, { cookie: b.cookie });

  before(async () => {
    t = await startTestApp();
    user = await createUser(t.db, { name: 'Me <b>me</b>' });
    other = await createUser(t.db);
    me = await signedInBrowser(t, user);
    them = await signedInBrowser(t, other);
    token = await createToken(t.db, user, { scopes: ['api'] });
    otherToken = await createToken(t.db, other, { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  it('sends anonymous browsers to sign in and back from every page', async () => {
    for (const path of ['/-/profile', '/-/profile/emails', '/-/profile/preferences']) {
      const res = await get(path, null);
      assert.equal(res.statusCode, 302, path);
      assert.equal(res.headers.location, `/users/sign_in?return_to=${encodeURIComponent(path)}`);
    }
  });

  it('shows the account and links every settings page', async () => {
    const res = await get('/-/profile');
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.includes('Me &lt;b&gt;me&lt;/b&gt;') && !res.body.includes('<b>me</b>'));
    assert.ok(res.body.includes(user.email));
    for (const href of ['/-/profile/emails', '/-/profile/preferences', '/-/profile/keys', '/-/profile/gpg_keys', '/-/profile/personal_access_tokens']) {
      assert.ok(res.body.includes(`href="${href}"`), href);
    }
  });

  it('adds an email the API then lists, unconfirmed, and removes it', async () => {
    const added = await post('/-/profile/emails', { email: 'second+<i>@example.com' });
    assert.equal(added.statusCode, 303, added.body);
    assert.equal(added.headers.location, '/-/profile/emails');
    const api = await t.request({ url: '/api/v4/user/emails', token });
    const [email] = api.json() as { id: number; email: string; confirmed_at: string | null }[];
    assert.equal(email!.email, 'second+<i>@example.com');
    assert.equal(email!.confirmed_at, null);

    const page = await get('/-/profile/emails');
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('second+&lt;i&gt;@example.com') && !page.body.includes('<i>@'));
    assert.match(page.body, /second\+&lt;i&gt;@example\.com<\/td><td>Unconfirmed<\/td>/);
    assert.match(page.body, /Primary email/);

    // Someone else's email is not found to this user; their own page lists nothing of it.
    assert.equal((await post(`/-/profile/emails/${email!.id}/delete`, {}, them)).statusCode, 404);
    assert.ok(!(await get('/-/profile/emails', them)).body.includes('second+'));
    // Without the CSRF token nothing is removed.
    const forged = await postForm(t, `/-/profile/emails/${email!.id}/delete`, {}, { cookie: me.cookie });
    assert.equal(forged.statusCode, 422);
    assert.equal((await t.request({ url: '/api/v4/user/emails', token })).json().length, 1);

    const removed = await post(`/-/profile/emails/${email!.id}/delete`, {});
    assert.equal(removed.statusCode, 303);
    assert.deepEqual((await t.request({ url: '/api/v4/user/emails', token })).json(), []);
    for (const bad of ['abc', '0', '99999999999']) assert.equal((await post(`/-/profile/emails/${bad}/delete`, {})).statusCode, 404, bad);
  });

  it('answers the API\'s refusals with 400 and keeps what was typed', async () => {
    const invalid = await post('/-/profile/emails', { email: 'not-an-email' });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /email is invalid/);
    assert.match(invalid.body, /value="not-an-email"/);
    const taken = await post('/-/profile/emails', { email: other.email.toUpperCase() });
    assert.equal(taken.statusCode, 400);
    assert.match(taken.body, /email has already been taken/);
    const long = await post('/-/profile/emails', { email: `${'a'.repeat(300)}@example.com` });
    assert.equal(long.statusCode, 400);
    assert.deepEqual((await t.request({ url: '/api/v4/user/emails', token })).json(), []);
  });

  it('saves the preferences the API exposes, unticked boxes as false', async () => {
    const first = await get('/-/profile/preferences');
    assert.equal(first.statusCode, 200);
    // Before any change the page shows the defaults and writes nothing.
    assert.match(first.body, /id="view-diffs-file-by-file" name="view_diffs_file_by_file" value="1">/);
    assert.match(first.body, /id="show-whitespace-in-diffs" name="show_whitespace_in_diffs" value="1" checked>/);
    assert.equal(await t.db.selectFrom('user_preferences').select('id').where('user_id', '=', user.id).executeTakeFirst(), undefined);

    const saved = await post('/-/profile/preferences', { view_diffs_file_by_file: '1' });
    assert.equal(saved.statusCode, 303);
    assert.deepEqual(
      (await t.request({ url: '/api/v4/user/preferences', token })).json(),
      { id: (await t.db.selectFrom('user_preferences').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow()).id, user_id: user.id, view_diffs_file_by_file: true, show_whitespace_in_diffs: false },
    );
    const page = await get(saved.headers.location as string);
    assert.match(page.body, /Preferences saved\./);
    assert.match(page.body, /name="view_diffs_file_by_file" value="1" checked>/);
    assert.match(page.body, /name="show_whitespace_in_diffs" value="1">/);
    // Another user's preferences are theirs alone.
    assert.equal((await t.request({ url: '/api/v4/user/preferences', token: otherToken })).json().view_diffs_file_by_file, false);
    const forged = await postForm(t, '/-/profile/preferences', { show_whitespace_in_diffs: '1' }, { cookie: me.cookie });
    assert.equal(forged.statusCode, 422);
    assert.equal((await t.request({ url: '/api/v4/user/preferences', token })).json().show_whitespace_in_diffs, false);
  });
});
