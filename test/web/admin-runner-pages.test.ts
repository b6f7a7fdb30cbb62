/**
 * A runner's admin pages, the GraphQL runner's adminUrl and editAdminUrl (issue 33, "every link
 * opens a page"): administrators see the runner and change it with PUT /runners/:id's fields and
 * refusals; everyone else gets the 404 page, and a form without its CSRF token changes nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { postForm, signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('admin runner pages', () => {
  let t: TestApp;
  let admin: Browser;
  let adminToken: string;
  let runner: TestRunner;
  let adminUrl: string;
  let editUrl: string;

  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const apiRunner = async () => (await t.request({ url: `/api/v4/runners/${runner.id}`, token: adminToken })).json() as Record<string, any>;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    const root = await createAdmin(t.db);
    admin = await signedInBrowser(t, root);
    adminToken = await createToken(t.db, root, { scopes: ['api'] });
    runner = await TestRunner.register(t, { tags: ['linux'], description: 'build <box>' });
    const res = await t.request({
      method: 'POST', url: '/api/graphql', token: adminToken,
      payload: { query: `{ runner(id: "gid://gitlab/Ci::Runner/${runner.id}") { adminUrl editAdminUrl } }` },
    });
    const data = (res.json() as { data: { runner: { adminUrl: string; editAdminUrl: string } } }).data.runner;
    adminUrl = data.adminUrl.slice(t.config.externalUrl.length);
    editUrl = data.editAdminUrl.slice(t.config.externalUrl.length);
  });
  after(async () => { await t.close(); });

  it('opens the adminUrl and editAdminUrl GraphQL hands out', async () => {
    const show = await get(adminUrl, admin);
    assert.equal(show.statusCode, 200);
    assert.match(show.body, /build &lt;box&gt;/);
    assert.match(show.body, /<th scope="row">Tags<\/th><td>linux<\/td>/);
    const edit = await get(editUrl, admin);
    assert.equal(edit.statusCode, 200);
    assert.match(edit.body, /id="runner-form"/);
  });

  it('is the 404 page for anyone but administrators, and the sign-in page for anonymous visitors', async () => {
    const user = await signedInBrowser(t, await createUser(t.db));
    for (const url of [adminUrl, editUrl]) assert.equal((await get(url, user)).statusCode, 404, url);
    assert.equal((await get(adminUrl)).statusCode, 302);
    assert.equal((await postForm(t, adminUrl, { authenticity_token: user.csrf, description: 'x', tag_list: 'a' }, { cookie: user.cookie })).statusCode, 404);
    assert.equal((await get('/admin/runners/99999999', admin)).statusCode, 404);
    assert.equal((await get('/admin/runners/x/edit', admin)).statusCode, 404);
  });

  it('saves the form as PUT /runners/:id does, with its refusals', async () => {
    const forged = await postForm(t, adminUrl, { description: 'forged', tag_list: 'a' }, { cookie: admin.cookie });
    assert.notEqual(forged.statusCode, 303);
    assert.equal((await apiRunner()).description, 'build <box>');

    const refused = await postForm(t, adminUrl, { authenticity_token: admin.csrf, description: 'd', tag_list: '' }, { cookie: admin.cookie });
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body, /tags_list can not be empty when runner is not allowed to pick untagged jobs/);
    const short = await postForm(t, adminUrl, {
      authenticity_token: admin.csrf, description: 'd', tag_list: 'a', maximum_timeout: '60',
    }, { cookie: admin.cookie });
    assert.equal(short.statusCode, 422);
    assert.match(short.body, /maximum_timeout needs to be at least 10 minutes/);
    const bad = await postForm(t, adminUrl, { authenticity_token: admin.csrf, description: 'd', maximum_timeout: '1e3' }, { cookie: admin.cookie });
    assert.equal(bad.statusCode, 400);

    const saved = await postForm(t, adminUrl, {
      authenticity_token: admin.csrf, description: 'renamed', tag_list: 'b, a, a', paused: '1', protected: '1', locked: '1',
      maximum_timeout: '3600', maintenance_note: 'note',
    }, { cookie: admin.cookie });
    assert.equal(saved.statusCode, 303);
    assert.equal(saved.headers.location, adminUrl);
    const now = await apiRunner();
    assert.equal(now.description, 'renamed');
    assert.deepEqual(now.tag_list, ['a', 'b']);
    assert.equal(now.paused, true);
    assert.equal(now.access_level, 'ref_protected');
    assert.equal(now.locked, true);
    assert.equal(now.run_untagged, false);
    assert.equal(now.maximum_timeout, 3600);
    assert.equal(now.maintenance_note, 'note');
  });
});
