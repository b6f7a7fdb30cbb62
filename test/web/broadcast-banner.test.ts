/**
 * Broadcast messages on every page (issue 33 item 6): the /broadcast_messages API's current
 * messages, their Markdown sanitised, colours from a stylesheet (no style attribute), only while
 * they run, `target_path` and `target_access_levels` as the Service honours them (the latter only
 * behind role_targeted_broadcast_messages), a dismissed one gone while its cookie is set, and
 * only the last notification shown.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { pathMatches } from '../../src/web/broadcast.ts';

const HOUR = 3_600_000;
const iso = (offset: number) => new Date(Date.now() + offset).toISOString();

describe('web interface: broadcast messages', () => {
  let t: TestApp;
  let p: CiProject;
  let owner: Browser;
  let developer: Browser;
  let reporter: Browser;
  const created: number[] = [];
  const get = (url: string, b?: Browser | null, cookie = '') =>
    t.request({ url, headers: { cookie: [b?.cookie, cookie].filter(Boolean).join('; ') } });
  const banner = (body: string, id: number) => body.includes(`id="broadcast-message-${id}"`);

  async function broadcast(fields: Record<string, unknown>): Promise<number> {
    const res = await t.request({ method: 'POST', url: '/api/v4/broadcast_messages', token: ROOT_TOKEN, payload: fields });
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as { id: number }).id;
    created.push(id);
    return id;
  }

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'broadcast-project', visibility: 'public' });
    owner = await signedInBrowser(t, p.owner);
    for (const [level, set] of [[30, (b: Browser) => { developer = b; }], [20, (b: Browser) => { reporter = b; }]] as const) {
      const u = await createUser(t.db);
      const r = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: u.id, access_level: level } });
      assert.equal(r.statusCode, 201, r.body);
      set(await signedInBrowser(t, u));
    }
  });
  afterEach(async () => {
    while (created.length > 0) {
      await t.request({ method: 'DELETE', url: `/api/v4/broadcast_messages/${created.pop()}`, token: ROOT_TOKEN });
    }
  });
  after(async () => { await t.close(); });

  it('shows a current banner on every page, its Markdown sanitised and its colours from a stylesheet', async () => {
    const id = await broadcast({
      message: '**Maintenance** tonight <script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror=alert(3)>',
      color: '#123456', font: '#abcdef',
    });
    for (const [path, b, status] of [['/explore/projects', null, 200], [`/${p.fullPath}`, owner, 200], ['/nobody/nothing', null, 404],
      ['/-/profile/keys', owner, 200], [`/${p.fullPath}/-/tree/main`, null, 404]] as const) {
      const res = await get(path, b);
      assert.equal(res.statusCode, status, path);
      assert.ok(banner(res.body, id), `the banner on ${path}`);
    }
    const res = await get('/explore/projects');
    const markup = /<div class="broadcast broadcast-banner bm-\d+"[^>]*>([\s\S]*?)<\/div><\/div>/.exec(res.body)?.[0] ?? '';
    assert.match(markup, /<strong>Maintenance<\/strong> tonight/);
    assert.ok(!/<script|javascript:|onerror/.test(res.body));
    assert.ok(!/style=/.test(res.body), 'no style attribute the policy would refuse');
    assert.ok(!res.body.includes('broadcast-dismiss'), 'not dismissable: no close button');
    const css = /<link rel="stylesheet" href="(\/-\/broadcast_messages\.css\?v=[0-9a-f]{16})">/.exec(res.body)?.[1];
    assert.ok(css, 'the colours\' stylesheet is linked');
    const sheet = await get(css);
    assert.equal(sheet.statusCode, 200);
    assert.match(String(sheet.headers['content-type']), /^text\/css/);
    assert.ok(sheet.body.includes(`.broadcast-banner.bm-${id}{background-color:#123456;color:#abcdef;}`));
  });

  it('shows a message only while it runs, and a new one on the next page', async () => {
    const soon = await broadcast({ message: 'Later', starts_at: iso(HOUR), ends_at: iso(2 * HOUR) });
    const now = await broadcast({ message: 'Now', ends_at: iso(HOUR) });
    const body = (await get('/explore/projects')).body;
    assert.ok(banner(body, now) && !banner(body, soon));
  });

  it('honours target_path: a pattern over the whole path, * for any text, without regard to case', async () => {
    const id = await broadcast({ message: 'Explore only', target_path: '/EXPLORE/*' });
    assert.ok(banner((await get('/explore/projects')).body, id));
    assert.ok(banner((await get('/explore/groups')).body, id));
    assert.ok(!banner((await get(`/${p.fullPath}`)).body, id));
    assert.equal(pathMatches('*/-/jobs/*', '/a/b/-/jobs/12'), true);
    assert.equal(pathMatches('/a/*', '/a'), false);
    assert.equal(pathMatches('/a*b*c', '/aXbYc'), true);
    assert.equal(pathMatches(`/${'*a'.repeat(50)}`, `/${'a'.repeat(2000)}b`), false);
  });

  it('hides a dismissed message while its cookie is set; a dismissable one has a close button', async () => {
    const id = await broadcast({ message: 'Closable', dismissable: true, ends_at: iso(HOUR) });
    const res = await get('/explore/projects');
    assert.ok(banner(res.body, id));
    assert.match(res.body, new RegExp(`<button type="button" class="broadcast-dismiss" data-id="${id}" data-expires="[^"]+" aria-label="Close" hidden>`));
    assert.match(res.body, /<script src="\/-\/assets\/broadcast-[0-9a-f]{16}\.js" defer><\/script>/);
    assert.ok(!banner((await get('/explore/projects', null, `hide_broadcast_message_${id}=true`)).body, id));
    assert.ok(!banner((await get(`/${p.fullPath}`, owner, `hide_broadcast_message_${id}=true`)).body, id));
  });

  it('shows only the last current notification, at the page\'s foot', async () => {
    const first = await broadcast({ message: 'First note', broadcast_type: 'notification' });
    const last = await broadcast({ message: 'Last note', broadcast_type: 'notification' });
    const body = (await get('/explore/projects')).body;
    assert.ok(!banner(body, first) && banner(body, last));
    assert.match(body, /class="broadcast broadcast-notification"[\s\S]*Last note[\s\S]*<\/body>/);
  });

  it('shows a message for some roles only on their project\'s pages, and only with the flag on', async () => {
    const id = await broadcast({ message: 'Developers', target_access_levels: [30] });
    assert.ok(!banner((await get(`/${p.fullPath}`, developer)).body, id), 'off by default, as in 15.2');
    const on = await t.request({ method: 'POST', url: '/api/v4/features/role_targeted_broadcast_messages', token: ROOT_TOKEN, payload: { value: 'true' } });
    assert.equal(on.statusCode, 201, on.body);
    try {
      assert.ok(banner((await get(`/${p.fullPath}`, developer)).body, id));
      assert.ok(!banner((await get(`/${p.fullPath}`, reporter)).body, id), 'a reporter is not targeted');
      assert.ok(!banner((await get(`/${p.fullPath}`)).body, id), 'nor is a signed-out visitor');
      assert.ok(!banner((await get('/explore/projects', developer)).body, id), 'nor a page outside a project');
    } finally {
      await t.request({ method: 'DELETE', url: '/api/v4/features/role_targeted_broadcast_messages', token: ROOT_TOKEN });
    }
  });
});
